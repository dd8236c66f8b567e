//! Where a command connects: the servers named by database clients' options
//! and the hosts and URLs given to network tools.
//!
//! Option tables say which options take a value, so a value (`-H 'Host: x'`,
//! `-u admin:1234`) is never taken for a host. Unknown syntax yields nothing.

use k8s_openapi::api::core::v1::Container;

use super::command::{SimpleCommand, simple_commands};
use super::host::{Locality, has_scheme, host_locality, url_parts};

/// One place a command connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host`, `host:port`, `user@host`, a comma-separated list, or a variable.
    pub host: String,
    /// The path of an HTTP URL (query stripped); `None` for other targets.
    pub path: Option<String>,
}

/// Clients whose `-h` means host (elsewhere it often means help).
#[rustfmt::skip]
const DASH_H_HOST: &[&str] = &[
    "pg_isready", "psql", "redis-cli", "valkey-cli", "keydb-cli", "mysqladmin", "mysql",
    "mariadb-admin", "mariadb", "clickhouse-client",
];
/// Options naming a server, for any dependency client.
#[rustfmt::skip]
const HOST_OPTIONS: &[&str] = &[
    "--host", "--hostname", "--server", "--bootstrap-server", "--broker-list", "--zookeeper",
    "--endpoints", "--addr", "-addr", "--http-addr", "-http-addr", "--url", "--uri",
];

/// Option syntax of a tool: which options take a value.
struct Syntax {
    short: &'static str,
    long: &'static [&'static str],
    /// Go-style flags: `-name value` / `-name=value`, no clusters.
    go: bool,
}

#[rustfmt::skip]
const CURL: Syntax = Syntax {
    short: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    long: &[
        "--header", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json",
        "--request", "--output", "--user", "--user-agent", "--referer", "--max-time",
        "--connect-timeout", "--write-out", "--retry", "--retry-delay", "--retry-max-time",
        "--cacert", "--capath", "--cert", "--key", "--proxy", "--resolve", "--connect-to",
        "--interface", "--cookie", "--cookie-jar", "--form", "--config", "--unix-socket",
        "--abstract-unix-socket", "--url", "--noproxy", "--limit-rate", "--oauth2-bearer",
        "--dns-servers", "--max-filesize", "--range",
    ],
    go: false,
};
#[rustfmt::skip]
const WGET: Syntax = Syntax {
    short: "aABDeiIlOoPQRtTUwX",
    long: &[
        "--output-document", "--output-file", "--append-output", "--timeout", "--tries",
        "--wait", "--user-agent", "--header", "--user", "--password", "--post-data",
        "--body-data", "--method", "--execute", "--directory-prefix", "--input-file",
        "--ca-certificate", "--certificate", "--private-key", "--bind-address",
        "--dns-timeout", "--connect-timeout", "--read-timeout",
    ],
    go: false,
};
#[rustfmt::skip]
const HTTPIE: Syntax = Syntax {
    short: "aAops",
    long: &[
        "--auth", "--auth-type", "--output", "--print", "--style", "--timeout", "--proxy",
        "--cert", "--cert-key", "--verify", "--session",
    ],
    go: false,
};
#[rustfmt::skip]
const NETCAT: Syntax = Syntax {
    short: "ceIiMmOPpqsTVWwXx",
    long: &["--wait", "--source", "--source-port", "--proxy", "--proxy-type", "--sh-exec", "--exec"],
    go: false,
};
const PING: Syntax = Syntax { short: "cWiwstlIQpM", long: &[], go: false };
const DIG: Syntax = Syntax { short: "bcfkpqtxy", long: &[], go: false };
#[rustfmt::skip]
const CQLSH: Syntax = Syntax {
    short: "upkfe",
    long: &[
        "--username", "--password", "--keyspace", "--file", "--execute", "--cqlshrc",
        "--cqlversion", "--encoding", "--connect-timeout", "--request-timeout",
        "--protocol-version",
    ],
    go: false,
};
#[rustfmt::skip]
const GRPCURL: Syntax = Syntax {
    short: "",
    long: &[
        "d", "H", "rpc-header", "reflect-header", "import-path", "proto", "protoset",
        "max-time", "connect-timeout", "keepalive-time", "authority", "servername", "cert",
        "key", "cacert", "user-agent", "max-msg-sz", "format", "protoset-out",
    ],
    go: true,
};
const NONE: Syntax = Syntax { short: "", long: &[], go: false };

/// Where `cmd` connects, when its program is one of `clients` (database,
/// cache and queue clients) or `tools` (network tools). `/dev/tcp/host/port`
/// redirections count for any program.
pub fn targets(cmd: &SimpleCommand, clients: &[String], tools: &[String]) -> Vec<Target> {
    let tool = cmd.program.as_str();
    let args = &cmd.args;
    let mut out: Vec<Target> = cmd
        .args
        .iter()
        .chain(&cmd.redirects)
        .filter_map(|w| w.strip_prefix("/dev/tcp/").or_else(|| w.strip_prefix("/dev/udp/")))
        .map(|rest| host(rest.split('/').next().unwrap_or_default()))
        .collect();
    if clients.iter().any(|c| c == tool) {
        let before = out.len();
        out.extend(client_hosts(tool, args).iter().map(|h| host(&authorities(h))));
        if out.len() == before {
            // libpq and the mysql client read their server from the environment.
            match tool {
                "pg_isready" | "psql" => out.push(host("$PGHOST")),
                t if t.starts_with("mysql") || t.starts_with("mariadb") => out.push(host("$MYSQL_HOST")),
                _ => {}
            }
        }
    } else if tools.iter().any(|t| t == tool) {
        out.extend(tool_targets(tool, args));
    }
    out
}

/// Network tools whose success says a server answered on a port: HTTP and
/// gRPC clients, netcat, telnet. Not `ping` or a DNS lookup, which ask the
/// network and the resolver, not a server.
const ASK_A_SERVER: &[&str] =
    &["curl", "wget", "http", "https", "nc", "ncat", "netcat", "telnet", "grpc_health_probe", "grpcurl"];

/// Whether `words`, one command of a script, is a request to the
/// container's own server: one of the `tools` that asks a server (an HTTP
/// or gRPC client, netcat), whose every target is the container itself
/// (loopback, its pod IP or hostname, a variable of its env that names
/// one). A target lifeguard cannot place (an unset variable, a unix socket)
/// is not.
pub fn requests_own_server(words: &[String], c: &Container, tools: &[String]) -> bool {
    let commands = simple_commands(words);
    let [cmd] = &commands[..] else { return false };
    if !ASK_A_SERVER.contains(&cmd.program.as_str()) {
        return false;
    }
    let reached = targets(cmd, &[], tools);
    !reached.is_empty() && reached.iter().all(|t| host_locality(&t.host, c, &cmd.assignments) == Locality::Local)
}

fn host(h: &str) -> Target {
    Target { host: h.to_owned(), path: None }
}

fn client_hosts<'a>(tool: &str, args: &'a [String]) -> Vec<&'a str> {
    let mut hosts = option_values(args, HOST_OPTIONS);
    for (i, a) in args.iter().enumerate() {
        if has_scheme(a) {
            hosts.push(a);
        }
        // libpq conninfo: "host=db port=5432 dbname=app"
        hosts.extend(a.split_whitespace().filter_map(|p| p.strip_prefix("host=")));
        if DASH_H_HOST.contains(&tool) {
            match a.strip_prefix("-h") {
                Some("") => hosts.extend(args.get(i + 1).map(String::as_str)),
                Some(v) if !a.starts_with("--") && !v.contains('=') => hosts.push(v),
                _ => {}
            }
        }
    }
    match tool {
        t if t.starts_with("rabbitmq") => hosts.extend(option_values(args, &["-n", "--node"])),
        "nats" => hosts.extend(option_values(args, &["-s"])),
        "sqlcmd" => hosts.extend(option_values(args, &["-S"]).into_iter().map(sqlcmd_host)),
        "cqlsh" => hosts.extend(operands(args, &CQLSH).into_iter().take(1)),
        "memcached-tool" => hosts.extend(operands(args, &NONE).into_iter().take(1)),
        _ => {}
    }
    hosts
}

fn tool_targets(tool: &str, args: &[String]) -> Vec<Target> {
    // Through a unix socket, a URL's host is only a header.
    #[rustfmt::skip]
    let unix = has_flag(args, &["--unix-socket", "--abstract-unix-socket", "-U", "--unixsock", "-unix", "--unix"]);
    let first = |syn: &Syntax| operands(args, syn).into_iter().take(1).map(host).collect();
    match tool {
        _ if unix => Vec::new(),
        "curl" => {
            let mut urls = operands(args, &CURL);
            urls.extend(option_values(args, &["--url"]));
            http_targets(urls)
        }
        "wget" => http_targets(operands(args, &WGET)),
        "http" | "https" => {
            let ops = operands(args, &HTTPIE);
            http_targets(ops.into_iter().skip_while(|a| a.chars().all(|c| c.is_ascii_uppercase())).take(1).collect())
        }
        "nc" | "ncat" | "netcat" | "telnet" => first(&NETCAT),
        "ping" => first(&PING),
        "nslookup" | "dig" => {
            let ops = operands(args, if tool == "dig" { &DIG } else { &NONE });
            let names: Vec<&str> = ops.iter().copied().filter(|o| !o.starts_with(['@', '+'])).collect();
            // The server asked, else the name looked up through the cluster DNS.
            let server = ops.iter().find_map(|o| o.strip_prefix('@'));
            let server = server.or_else(|| names.get(1).copied().filter(|_| tool == "nslookup"));
            server.or_else(|| names.first().copied()).into_iter().map(host).collect()
        }
        "grpc_health_probe" => option_values(args, &["-addr", "--addr"]).into_iter().map(host).collect(),
        "grpcurl" => operands(args, &GRPCURL).into_iter().take(1).filter(|a| !a.contains('/')).map(host).collect(),
        _ => args.iter().filter(|a| has_scheme(a)).filter_map(|a| url_target(a, false)).collect(),
    }
}

fn http_targets(urls: Vec<&str>) -> Vec<Target> {
    urls.into_iter().filter_map(|u| url_target(u, true)).collect()
}

/// A URL operand: a scheme, or `host:port[/path]`, `host.domain/path`, `:port/path`.
fn url_target(word: &str, http: bool) -> Option<Target> {
    let (auth, path) = url_parts(word)?;
    let hostish = !auth.is_empty()
        && auth.chars().all(|c| c.is_ascii_alphanumeric() || ".-_:[]$(){}@,".contains(c))
        && !auth.chars().all(|c| c.is_ascii_digit());
    let explicit = has_scheme(word) || auth.contains([':', '.']) || !path.is_empty() || auth == "localhost";
    let path = http.then(|| if path.is_empty() { "/" } else { path }.to_owned());
    (hostish && explicit).then(|| Target { host: auth.to_owned(), path })
}

/// Arguments that are not options or option values.
fn operands<'a>(args: &'a [String], syn: &Syntax) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" && !syn.go {
            out.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if a == "-" || !a.starts_with('-') {
            out.push(a.as_str());
            continue;
        }
        if a.contains('=') {
            continue;
        }
        if syn.go || a.starts_with("--") {
            let name = if syn.go { a.trim_start_matches('-') } else { a.as_str() };
            i += usize::from(syn.long.contains(&name));
            continue;
        }
        // A cluster (`-sfo out`): the first option taking a value ends it.
        let cluster: Vec<char> = a.chars().skip(1).collect();
        if let Some(pos) = cluster.iter().position(|c| syn.short.contains(*c)) {
            i += usize::from(pos + 1 == cluster.len());
        }
    }
    out
}

/// Values of an option given as `opt value` or `opt=value`.
fn option_values<'a>(args: &'a [String], names: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a.split_once('=') {
            Some((n, v)) if names.contains(&n) => out.push(v),
            None if names.contains(&a.as_str()) => out.extend(args.get(i + 1).map(String::as_str)),
            _ => {}
        }
    }
    out
}

fn has_flag(args: &[String], flags: &[&str]) -> bool {
    args.iter().any(|a| flags.contains(&a.as_str()))
}

/// `https://a:2379,https://b:2379` -> `a:2379,b:2379`.
fn authorities(value: &str) -> String {
    let hosts: Vec<&str> =
        value.split(',').map(|v| if has_scheme(v) { url_parts(v).map_or(v, |(auth, _)| auth) } else { v }).collect();
    hosts.join(",")
}

/// `tcp:host,1433` / `host\instance` -> `host`; shared memory is local.
fn sqlcmd_host(v: &str) -> &str {
    let v = v.strip_prefix("tcp:").or_else(|| v.strip_prefix("np:")).unwrap_or(v);
    let v = v.split([',', '\\']).next().unwrap_or(v);
    if v.starts_with("lpc:") || v == "." || v.eq_ignore_ascii_case("(local)") { "localhost" } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::command::simple_commands;
    use crate::settings::Settings;

    fn reached(argv: &[&str]) -> Vec<(String, Option<String>)> {
        let s = Settings::default();
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        simple_commands(&argv)
            .iter()
            .flat_map(|c| targets(c, &s.dependency_clients, &s.network_tools))
            .map(|t| (t.host, t.path))
            .collect()
    }

    fn hosts(argv: &[&str]) -> Vec<String> {
        reached(argv).into_iter().map(|(h, _)| h).collect()
    }

    #[test]
    fn option_values_are_not_hosts() {
        let got =
            reached(&["curl", "-sf", "-H", "Host: x.y", "-u", "admin:1234", "-o", "/dev/null", "http://a.b:80/p?q"]);
        assert_eq!(got, [("a.b:80".to_owned(), Some("/p".to_owned()))]);
        assert_eq!(hosts(&["nc", "-zw3", "db", "5432"]), ["db"]);
        assert_eq!(hosts(&["nc", "-z", "-w", "3", "db", "5432"]), ["db"]);
        assert_eq!(hosts(&["wget", "-qO-", "-T", "2", "api:8080/x"]), ["api:8080"]);
        assert_eq!(hosts(&["http", "GET", ":8080/health"]), [":8080"]);
        assert_eq!(
            hosts(&["grpcurl", "-plaintext", "-d", "{}", "svc:9000", "grpc.health.v1.Health/Check"]),
            ["svc:9000"]
        );
    }

    #[test]
    fn client_host_spellings() {
        assert_eq!(hosts(&["mysql", "-hdb", "-uroot", "-psecret"]), ["db"]);
        assert_eq!(hosts(&["psql", "host=pg port=5432", "-c", "select 1"]), ["pg"]);
        assert_eq!(
            hosts(&["etcdctl", "--endpoints=https://a:2379,https://b:2379", "endpoint", "health"]),
            ["a:2379,b:2379"]
        );
        assert_eq!(hosts(&["redis-cli", "-u", "redis://u:p@cache:6379/0", "ping"]), ["u:p@cache:6379"]);
        assert_eq!(hosts(&["rabbitmqctl", "-n", "rabbit@peer", "status"]), ["rabbit@peer"]);
        assert_eq!(hosts(&["sqlcmd", "-S", "tcp:sql,1433", "-Q", "select 1"]), ["sql"]);
        assert_eq!(hosts(&["cqlsh", "-u", "cassandra", "node-0"]), ["node-0"]);
        // `-h` is help for mongosh; an env fallback only for libpq and mysql.
        assert!(hosts(&["mongosh", "--eval", "db.ping()"]).is_empty());
        assert_eq!(hosts(&["pg_isready"]), ["$PGHOST"]);
    }

    #[test]
    fn requests_to_the_own_server_are_local_requests_of_server_clients() {
        let tools = Settings::default().network_tools;
        let env = Container {
            env: Some(vec![k8s_openapi::api::core::v1::EnvVar {
                name: "API".into(),
                value: Some("127.0.0.1:8080".into()),
                ..Default::default()
            }]),
            ..Container::default()
        };
        let own = |words: &[&str]| {
            let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
            requests_own_server(&words, &env, &tools)
        };
        assert!(own(&["curl", "-sf", "localhost:8080/drain-done"]));
        assert!(own(&["curl", "-f", "http://127.0.0.1:8080/ready"]));
        assert!(own(&["wget", "-q", "-O", "/dev/null", "http://[::1]:9090/drained"]));
        assert!(own(&["nc", "-z", "localhost", "8080"]));
        assert!(own(&["curl", "-sf", "http://$API/idle"]));
        // Another host, a host lifeguard cannot place, a socket, no target, not a server client.
        assert!(!own(&["curl", "-sf", "http://drain-coordinator.ops:8080/idle"]));
        assert!(!own(&["curl", "-sf", "http://$OTHER/idle"]));
        assert!(!own(&["curl", "--unix-socket", "/run/app.sock", "http://localhost/idle"]));
        assert!(!own(&["curl", "-sf"]));
        assert!(!own(&["ping", "-c1", "localhost"]));
        assert!(!own(&["[", "-f", "/tmp/drained", "]"]));
    }

    #[test]
    fn sockets_and_unknown_programs_reach_nothing() {
        assert!(hosts(&["curl", "--unix-socket", "/s", "http://x/y"]).is_empty());
        assert!(hosts(&["nc", "-U", "/s"]).is_empty());
        assert!(hosts(&["podcli", "check", "http", "db:80"]).is_empty());
        assert_eq!(hosts(&["bash", "-c", "true </dev/tcp/db/5432"]), ["db"]);
        // A database URI's path is a database name, not an HTTP path.
        assert_eq!(reached(&["mongosh", "mongodb://localhost/db"]), [("localhost".to_owned(), None)]);
    }
}
