//! The test workload (`tests/workload`) as container images for the node's
//! containerd: the binary built statically for musl, so an image needs
//! nothing but that one file, and written as an OCI image-layout archive,
//! which `ctr images import` loads without a registry.
//!
//! Two images of the same binary: [`WORKLOAD_IMAGE`] runs it as the
//! container, [`PAUSE_IMAGE`] runs `lifeguard-test-workload pause` as the
//! pod sandbox (the kubelet's usual pause image would need a registry).
//!
//! Over 400 lines: the OCI layout writer (layer, config, manifest and index,
//! about 165 lines) and its tests (about 120 lines), which unpack each archive
//! and check every digest, sit together with the builds of the binaries it
//! packs.

use std::fs::File;
use std::io::{self, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

/// The workload container's image.
pub const WORKLOAD_IMAGE: &str = "lifeguard.test/workload:1";

/// The pod sandbox's image (the same binary, running `pause`).
pub const PAUSE_IMAGE: &str = "lifeguard.test/pause:1";

/// [`WORKLOAD_IMAGE`]'s entrypoint: the server, configured by env vars.
pub const WORKLOAD_ENTRYPOINT: &[&str] = &["/lifeguard-test-workload"];

/// [`PAUSE_IMAGE`]'s entrypoint.
pub const PAUSE_ENTRYPOINT: &[&str] = &["/lifeguard-test-workload", "pause"];

/// The workload's package (and binary) name.
const PACKAGE: &str = "lifeguard-test-workload";

/// Static, so the image needs no libc or loader.
const TARGET: &str = "x86_64-unknown-linux-musl";

/// Every file's modification time in the archives (the Unix epoch): fixed,
/// so the same binary always gives the same bytes, digests and image ID.
const MTIME: u64 = 0;

const LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar";
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// The workload built for [`TARGET`] in release mode, once per process.
///
/// `CARGO_TARGET_DIR` is `target/workload`, apart from the workspace's
/// `target/`: a `cargo test` running this holds the lock on that one for as
/// long as the tests run, and a build there would wait for it forever.
pub fn workload_binary() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build_workload).clone()
}

fn build_workload() -> Result<PathBuf, String> {
    let root = crate::repo_root();
    let target_dir = root.join("target/workload");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = ["build", "--release", "--locked", "--target", TARGET, "-p", PACKAGE];
    let output = Command::new(&cargo)
        .args(args)
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &target_dir)
        .output()
        .map_err(|e| format!("run {}: {e}", cargo.to_string_lossy()))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo {}` (CARGO_TARGET_DIR={}) failed ({}); is the target installed \
             (rustup target add {TARGET})? Its stderr:\n{}",
            args.join(" "),
            target_dir.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let binary = target_dir.join(TARGET).join("release").join(PACKAGE);
    if binary.is_file() { Ok(binary) } else { Err(format!("cargo built, but {} is not there", binary.display())) }
}

/// The static `lifeguard-webhook` and `lifeguard` that
/// `deploy/build-webhook.sh` builds for the chart's image, once they are
/// newer than every source they are built from. The tests do not build them
/// (a build in the workspace's `target/` would wait for the lock the running
/// `cargo test` holds); `.ci/run` runs the script before the tests.
pub fn webhook_binaries() -> Result<[PathBuf; 2], String> {
    let root = crate::repo_root();
    let release = root.join("target").join(TARGET).join("release");
    let binaries = [release.join("lifeguard-webhook"), release.join("lifeguard")];
    let newest_source = ["webhook", "policies", "lint"]
        .iter()
        .flat_map(|dir| newest_files(&root.join(dir)))
        .chain(["Cargo.lock", "Cargo.toml"].iter().map(|f| root.join(f)))
        .filter_map(|path| Some((std::fs::metadata(&path).ok()?.modified().ok()?, path)))
        .max();
    for binary in &binaries {
        let built = std::fs::metadata(binary)
            .and_then(|m| m.modified())
            .map_err(|e| format!("{}: {e} (run sh deploy/build-webhook.sh, as .ci/run does)", binary.display()))?;
        if let Some((changed, source)) = &newest_source
            && changed > &built
        {
            return Err(format!(
                "{} is older than {} (run sh deploy/build-webhook.sh, as .ci/run does)",
                binary.display(),
                source.display()
            ));
        }
    }
    Ok(binaries)
}

/// Every file under `dir`'s `src/` and its `Cargo.toml`.
fn newest_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.join("Cargo.toml")];
    let mut pending = vec![dir.join("src")];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() { pending.push(path) } else { out.push(path) }
        }
    }
    out
}

/// Writes `binary` as an image named `reference` (`name:tag`) running
/// `entrypoint`, in an OCI image-layout tar archive at `out`: `oci-layout`,
/// `index.json` naming it (`io.containerd.image.name` = `reference`, the
/// name `ctr images import` gives it; `org.opencontainers.image.ref.name` =
/// the tag) and `blobs/sha256/` holding one uncompressed layer (the binary
/// at `/lifeguard-test-workload`, mode 0755), the config and the manifest.
pub fn write_oci_archive(binary: &Path, reference: &str, entrypoint: &[&str], out: &Path) -> io::Result<()> {
    let image = Image {
        files: &[(PACKAGE, binary)],
        entrypoint,
        // The binary is in `/`: an exec hook may name it bare.
        env: &["PATH=/"],
        user: None,
    };
    write_image(&image, reference, out)
}

/// An image of static binaries: one layer with `files` (path in the image
/// without the leading `/`, and the file to copy, mode 0755, owned by root),
/// and the config's entrypoint, environment and user.
pub struct Image<'a> {
    /// `(path in the image, source file)`.
    pub files: &'a [(&'a str, &'a Path)],
    /// The entrypoint.
    pub entrypoint: &'a [&'a str],
    /// `NAME=value` entries.
    pub env: &'a [&'a str],
    /// `uid:gid`, or `None` for root.
    pub user: Option<&'a str>,
}

/// Writes `image` named `reference` (`name:tag`) as an OCI image-layout
/// archive at `out` (see [`write_oci_archive`]).
pub fn write_image(image: &Image<'_>, reference: &str, out: &Path) -> io::Result<()> {
    let tag = tag_of(reference).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("image reference {reference:?} is not name:tag"))
    })?;
    let mut files = Vec::new();
    for (path, source) in image.files {
        files.push((*path, std::fs::read(source)?));
    }

    let layer = Blob::new(LAYER_MEDIA_TYPE, layer_tar(&files)?);
    let mut config = json!({"Entrypoint": image.entrypoint, "Env": image.env});
    if let Some(user) = image.user {
        config["User"] = json!(user);
    }
    let config = Blob::new(
        CONFIG_MEDIA_TYPE,
        serde_json::to_vec(&json!({
            "architecture": "amd64",
            "os": "linux",
            "config": config,
            // Uncompressed, so the diff ID is the layer's own digest.
            "rootfs": { "type": "layers", "diff_ids": [layer.digest] },
        }))?,
    );
    let manifest = Blob::new(
        MANIFEST_MEDIA_TYPE,
        serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": config.descriptor(),
            "layers": [layer.descriptor()],
        }))?,
    );
    let mut manifest_descriptor = manifest.descriptor();
    manifest_descriptor["platform"] = json!({ "architecture": "amd64", "os": "linux" });
    manifest_descriptor["annotations"] = json!({
        "io.containerd.image.name": reference,
        "org.opencontainers.image.ref.name": tag,
    });
    let index = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [manifest_descriptor],
    }))?;

    let mut archive = tar::Builder::new(BufWriter::new(File::create(out)?));
    append(&mut archive, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#, 0o644)?;
    append_dir(&mut archive, "blobs/")?;
    append_dir(&mut archive, "blobs/sha256/")?;
    for blob in [&layer, &config, &manifest] {
        append(&mut archive, &format!("blobs/sha256/{}", blob.hex()), &blob.bytes, 0o644)?;
    }
    append(&mut archive, "index.json", &index, 0o644)?;
    archive.into_inner()?.flush()
}

/// The tag of `name:tag` (the colon after the last `/`, so a registry's
/// `host:port/` is not taken for one); `None` without a tag or with a
/// digest, which an import could not name the image by.
fn tag_of(reference: &str) -> Option<&str> {
    if reference.contains('@') {
        return None;
    }
    let name = &reference[reference.rfind('/').map_or(0, |i| i + 1)..];
    name.rsplit_once(':').map(|(_, tag)| tag).filter(|tag| !tag.is_empty())
}

/// The layer: each file at its path, mode 0755, after the directories
/// that lead to it.
fn layer_tar(files: &[(&str, Vec<u8>)]) -> io::Result<Vec<u8>> {
    let mut layer = tar::Builder::new(Vec::new());
    let mut dirs = std::collections::BTreeSet::new();
    for (path, content) in files {
        let parts: Vec<&str> = path.split('/').collect();
        for depth in 1..parts.len() {
            let dir = format!("{}/", parts[..depth].join("/"));
            if dirs.insert(dir.clone()) {
                append_dir(&mut layer, &dir)?;
            }
        }
        append(&mut layer, path, content, 0o755)?;
    }
    layer.into_inner()
}

/// A regular file owned by root, dated [`MTIME`].
fn append<W: io::Write>(archive: &mut tar::Builder<W>, path: &str, data: &[u8], mode: u32) -> io::Result<()> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(data.len() as u64);
    header.set_mode(mode);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(MTIME);
    archive.append_data(&mut header, path, data)
}

/// A directory owned by root, dated [`MTIME`].
fn append_dir<W: io::Write>(archive: &mut tar::Builder<W>, path: &str) -> io::Result<()> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_size(0);
    header.set_mode(0o755);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(MTIME);
    archive.append_data(&mut header, path, io::empty())
}

/// Content and its descriptor's fields.
struct Blob {
    media_type: &'static str,
    /// `sha256:<hex>`.
    digest: String,
    bytes: Vec<u8>,
}

impl Blob {
    fn new(media_type: &'static str, bytes: Vec<u8>) -> Blob {
        Blob { media_type, digest: format!("sha256:{}", sha256_hex(&bytes)), bytes }
    }

    fn hex(&self) -> &str {
        self.digest.trim_start_matches("sha256:")
    }

    /// The OCI descriptor pointing at it.
    fn descriptor(&self) -> Value {
        json!({ "mediaType": self.media_type, "digest": self.digest, "size": self.bytes.len() })
    }
}

/// SHA-256 in lowercase hex, as OCI digests spell it.
fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Read as _;

    use super::*;

    /// Every entry of a tar archive: path -> (mode, mtime, content).
    fn entries(archive: &[u8]) -> BTreeMap<String, (u32, u64, Vec<u8>)> {
        let mut out = BTreeMap::new();
        let mut archive = tar::Archive::new(archive);
        for entry in archive.entries().expect("tar entries") {
            let mut entry = entry.expect("a tar entry");
            let path = entry.path().expect("an entry path").to_string_lossy().into_owned();
            let (mode, mtime) = (entry.header().mode().expect("mode"), entry.header().mtime().expect("mtime"));
            let mut content = Vec::new();
            entry.read_to_end(&mut content).expect("entry content");
            out.insert(path, (mode, mtime, content));
        }
        out
    }

    /// The blob a descriptor points at, checked against its digest and size.
    fn resolve<'a>(files: &'a BTreeMap<String, (u32, u64, Vec<u8>)>, descriptor: &Value, media_type: &str) -> &'a [u8] {
        assert_eq!(descriptor["mediaType"], media_type, "{descriptor}");
        let digest = descriptor["digest"].as_str().expect("a digest");
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        let (_, _, blob) = files.get(&format!("blobs/sha256/{hex}")).unwrap_or_else(|| panic!("no blob {digest}"));
        assert_eq!(sha256_hex(blob), hex, "blob {digest} is not what its name says");
        assert_eq!(descriptor["size"].as_u64(), Some(blob.len() as u64), "{descriptor}");
        blob
    }

    #[test]
    fn the_archive_is_a_consistent_reproducible_oci_layout() {
        let dir = tempfile::tempdir().expect("temp dir");
        let binary = dir.path().join("dummy");
        let content = b"#!/bin/false\nnot really a binary\n".repeat(100);
        std::fs::write(&binary, &content).expect("write the dummy binary");
        let out = dir.path().join("image.tar");
        write_oci_archive(&binary, "lifeguard.test/pause:1", PAUSE_ENTRYPOINT, &out).expect("write the archive");
        let archive = std::fs::read(&out).expect("read the archive");
        let files = entries(&archive);

        assert_eq!(files["oci-layout"].2, br#"{"imageLayoutVersion":"1.0.0"}"#);
        let index: Value = serde_json::from_slice(&files["index.json"].2).expect("index.json is JSON");
        assert_eq!(index["schemaVersion"], 2);
        let manifests = index["manifests"].as_array().expect("manifests");
        assert_eq!(manifests.len(), 1, "{index}");
        assert_eq!(manifests[0]["annotations"]["io.containerd.image.name"], "lifeguard.test/pause:1");
        assert_eq!(manifests[0]["annotations"]["org.opencontainers.image.ref.name"], "1");

        let manifest: Value =
            serde_json::from_slice(resolve(&files, &manifests[0], MANIFEST_MEDIA_TYPE)).expect("manifest JSON");
        assert_eq!(manifest["schemaVersion"], 2);
        assert_eq!(manifest["mediaType"], MANIFEST_MEDIA_TYPE);
        let config: Value =
            serde_json::from_slice(resolve(&files, &manifest["config"], CONFIG_MEDIA_TYPE)).expect("config JSON");
        let layers = manifest["layers"].as_array().expect("layers");
        assert_eq!(layers.len(), 1);
        let layer = resolve(&files, &layers[0], LAYER_MEDIA_TYPE);

        assert_eq!((&config["architecture"], &config["os"]), (&json!("amd64"), &json!("linux")));
        assert_eq!(config["config"]["Entrypoint"], json!(["/lifeguard-test-workload", "pause"]));
        assert_eq!(config["rootfs"]["type"], "layers");
        assert_eq!(config["rootfs"]["diff_ids"], json!([layers[0]["digest"]]), "uncompressed: diff ID = digest");

        let layer_files = entries(layer);
        assert_eq!(layer_files.keys().collect::<Vec<_>>(), ["lifeguard-test-workload"]);
        assert_eq!(layer_files["lifeguard-test-workload"], (0o755, MTIME, content));

        let blobs = files.keys().filter(|p| p.starts_with("blobs/sha256/") && p.len() > "blobs/sha256/".len());
        assert_eq!(blobs.count(), 3, "layer, config, manifest and nothing else: {:?}", files.keys());

        let again = dir.path().join("again.tar");
        write_oci_archive(&binary, "lifeguard.test/pause:1", PAUSE_ENTRYPOINT, &again).expect("write it again");
        assert!(std::fs::read(&again).expect("read it again") == archive, "the same input gave different bytes");
    }

    #[test]
    fn an_image_of_several_binaries_has_their_directories_and_its_user() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"a").expect("write a");
        std::fs::write(&b, b"b").expect("write b");
        let image = Image {
            files: &[("usr/local/bin/a", &a), ("usr/local/bin/b", &b)],
            entrypoint: &["/usr/local/bin/a"],
            env: &[],
            user: Some("65532:65532"),
        };
        let out = dir.path().join("image.tar");
        write_image(&image, "example.test/two:0.1.0", &out).expect("write the archive");
        let files = entries(&std::fs::read(&out).expect("read the archive"));
        let index: Value = serde_json::from_slice(&files["index.json"].2).expect("index.json is JSON");
        let manifest: Value =
            serde_json::from_slice(resolve(&files, &index["manifests"][0], MANIFEST_MEDIA_TYPE)).expect("manifest");
        let config: Value =
            serde_json::from_slice(resolve(&files, &manifest["config"], CONFIG_MEDIA_TYPE)).expect("config JSON");
        assert_eq!(config["config"]["User"], "65532:65532");
        let layer = entries(resolve(&files, &manifest["layers"][0], LAYER_MEDIA_TYPE));
        assert_eq!(
            layer.keys().collect::<Vec<_>>(),
            ["usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/a", "usr/local/bin/b"]
        );
        assert_eq!(layer["usr/local/bin/b"], (0o755, MTIME, b"b".to_vec()));
    }

    #[test]
    fn references_need_a_tag() {
        assert_eq!(tag_of(WORKLOAD_IMAGE), Some("1"));
        assert_eq!(tag_of("localhost:5000/workload:v2"), Some("v2"));
        assert_eq!(tag_of("localhost:5000/workload"), None);
        assert_eq!(tag_of("workload@sha256:abcd"), None);
        let dir = tempfile::tempdir().expect("temp dir");
        let binary = dir.path().join("dummy");
        std::fs::write(&binary, b"x").expect("write the dummy binary");
        let error = write_oci_archive(&binary, "lifeguard.test/workload", WORKLOAD_ENTRYPOINT, &dir.path().join("o"))
            .expect_err("no tag");
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }
}
