//! What an image reference names: its repository path and last segment,
//! which the policy's `slowBootImages` and `databaseImages` match.

/// An image reference's repository path without registry host, tag or
/// digest, and its last component, the repository name:
/// `ghcr.io/vllm-project/semantic-router/extproc:v1` gives
/// `("vllm-project/semantic-router/extproc", "extproc")`.
pub fn image_repository(image: &str) -> (&str, &str) {
    let image = image.split('@').next().unwrap_or(image);
    let image = match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    };
    // Docker's rule: a first component with a dot or a port, or
    // `localhost`, is a registry host, not an organisation.
    let path = match image.split_once('/') {
        Some((host, rest)) if host.contains('.') || host.contains(':') || host == "localhost" => rest,
        _ => image,
    };
    (path, path.rsplit('/').next().unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::image_repository;

    #[test]
    fn image_repository_drops_registry_tag_and_digest() {
        assert_eq!(image_repository("vllm/vllm-openai:v0.6.3"), ("vllm/vllm-openai", "vllm-openai"));
        assert_eq!(
            image_repository("ghcr.io/vllm-project/semantic-router/extproc:v1"),
            ("vllm-project/semantic-router/extproc", "extproc")
        );
        assert_eq!(image_repository("registry:5000/triton"), ("triton", "triton"));
        assert_eq!(image_repository("localhost/a/b@sha256:abc"), ("a/b", "b"));
        assert_eq!(image_repository("nginx"), ("nginx", "nginx"));
    }
}
