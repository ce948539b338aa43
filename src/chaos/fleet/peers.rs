//! The peers file of `retrylint serve --peers FILE`: where every other
//! service listens, one `NAME: ADDRESS` line each, the names as the topology
//! writes them.
//!
//! ```yaml
//! db: 127.0.0.1:8083            # HOST:PORT
//! api: http://10.0.0.7:8080     # or a plain http:// base URL
//! ```
//!
//! Read with positions: an unknown service, a value that is not an address,
//! a missing port — each is an error at its file:line:column.

use std::collections::HashMap;
use std::path::Path;

use super::resolve::Resolver;
use crate::input::LoadError;
use crate::input::error::nearest;
use crate::input::fields::Fields;
use crate::input::read::{FileKind, read_text, syntax_error_in};
use crate::input::yaml::{self, Value};
use crate::topology::Topology;

/// Reads the peers file at `path` for a run of `t`.
pub fn load(path: &Path, t: &Topology) -> Result<Resolver, LoadError> {
    let shown = path.display().to_string();
    let text = read_text(path, &shown, FileKind::Peers)?;
    load_str(&text, &shown, t)
}

/// [`load`] on text already read; `file` names it in errors.
pub fn load_str(text: &str, file: &str, t: &Topology) -> Result<Resolver, LoadError> {
    let f = Fields::new(file, text);
    let root = yaml::parse_config(text).map_err(|e| syntax_error_in(file, text, e))?;
    let entries = match &root.value {
        Value::Map(entries) => entries,
        Value::Null => &Vec::new(),
        other => {
            return Err(f
                .error(
                    root.pos,
                    format!(
                        "a peers file is a mapping of service names to addresses, found {}",
                        other.kind()
                    ),
                )
                .with_help("write one `NAME: HOST:PORT` line per service"));
        }
    };
    let names: Vec<&str> = t.services.iter().map(|s| s.name.as_str()).collect();
    let mut map = HashMap::new();
    for (k, v) in entries {
        let name = f.str(k, "a service name")?;
        if !names.contains(&name) {
            let err = f.error(k.pos, format!("`{name}` is not a service of the topology"));
            return Err(match nearest(name, names.iter().copied()) {
                Some(near) => err.with_help(format!("did you mean `{near}`?")),
                None => err.with_help(format!("the services are: {}", names.join(", "))),
            });
        }
        let written = match &v.value {
            Value::Str(s) => s.to_string(),
            _ => return Err(f.expected(v, "an address `HOST:PORT` or `http://HOST:PORT`")),
        };
        let url = base_url(&written).map_err(|why| {
            f.error(v.pos, format!("`{written}` is not an address: {why}"))
                .with_help("write `HOST:PORT` (e.g. `127.0.0.1:8083`) or `http://HOST:PORT`")
        })?;
        map.insert(name.to_owned(), url);
    }
    Ok(Resolver::Peers(map))
}

/// `HOST:PORT` or `http://HOST:PORT[/]` as `http://HOST:PORT`.
fn base_url(written: &str) -> Result<String, &'static str> {
    let rest = match written.split_once("://") {
        Some(("http", rest)) => rest,
        Some(_) => return Err("only plain http:// is spoken between services"),
        None => written,
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains('/') {
        return Err("a peer is a host and a port, without a path");
    }
    let (host, port) = rest.rsplit_once(':').ok_or("the port is missing")?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err("the host is missing");
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(format!("http://{rest}")),
        _ => Err("the port must be a number from 1 to 65535"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo() -> Topology {
        crate::topology::load_str(
            "version: 1\nentry: api\nservices:\n  api:\n    calls: [ { to: db } ]\n  db: {}\n",
            "t.yaml",
            "t",
            &Default::default(),
        )
        .unwrap()
    }

    #[test]
    fn addresses_read_back_as_base_urls() {
        let r = load_str(
            "db: 127.0.0.1:8083\napi: http://10.0.0.7:8080/\n",
            "p.yaml",
            &topo(),
        )
        .unwrap();
        assert_eq!(r.url(&topo(), 1).as_deref(), Some("http://127.0.0.1:8083"));
        assert_eq!(r.url(&topo(), 0).as_deref(), Some("http://10.0.0.7:8080"));
    }

    #[test]
    fn errors_say_where() {
        let e = load_str("db: 127.0.0.1:8083\ndbb: 127.0.0.1:1\n", "p.yaml", &topo()).unwrap_err();
        assert_eq!(e.pos.map(|p| (p.line, p.column)), Some((2, 1)));
        assert!(e.to_string().contains("dbb"), "{e}");
        let e = load_str("db: 127.0.0.1\n", "p.yaml", &topo()).unwrap_err();
        assert_eq!(e.pos.map(|p| (p.line, p.column)), Some((1, 5)));
        let e = load_str("db: 127.0.0.1:99999\n", "p.yaml", &topo()).unwrap_err();
        assert!(e.to_string().contains("65535"), "{e}");
        let e = load_str("- db\n", "p.yaml", &topo()).unwrap_err();
        assert_eq!(e.pos.map(|p| p.line), Some(1));
    }
}
