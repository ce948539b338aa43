//! The per-run token that `drive` and every `serve` process share: start
//! and stop on an admin port need it (`Authorization: Bearer TOKEN`), so a
//! browser page, another user on a shared machine or a stray script cannot
//! start, replace or stop a run.
//!
//! Where it comes from, in order: `--token` (visible to `ps`: for throwaway
//! runs), `--token-file FILE`, the environment variable `RETRYLINT_TOKEN`
//! (how `export` wires it). Under `serve`, a `--token-file` that does not
//! exist yet is created with a fresh random token, readable by its owner
//! only, so several processes and the driver pointed at one file share it.
//! The token's text never appears in a message.

use std::io::Read;
use std::path::Path;

/// The environment variable a token may come from.
pub const TOKEN_ENV: &str = "RETRYLINT_TOKEN";
/// A token shorter than this is refused: guessing it must not be cheap.
pub(crate) const MIN_TOKEN: usize = 16;
/// A token longer than this is refused: it travels in every admin request.
pub(crate) const MAX_TOKEN: usize = 256;

/// A token, checked to be 16 to 256 visible ASCII characters. Its `Debug`
/// does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Why a token was refused; none of them quotes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error(
        "the token has {0} characters, fewer than {MIN_TOKEN}: use a random one (`retrylint serve --token-file FILE` makes one in a file that does not exist yet)"
    )]
    Short(usize),
    #[error("the token has {0} characters, more than {MAX_TOKEN}")]
    Long(usize),
    #[error(
        "the token holds a space or a control character: use visible ASCII characters only (letters, digits, punctuation)"
    )]
    Characters,
    #[error("{path}: {why}")]
    File { path: String, why: String },
}

impl Token {
    /// Checks `text` (a trailing line break, as a file has, is dropped).
    pub fn new(text: &str) -> Result<Token, TokenError> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let n = text.chars().count();
        if n < MIN_TOKEN {
            return Err(TokenError::Short(n));
        }
        if n > MAX_TOKEN {
            return Err(TokenError::Long(n));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::Characters);
        }
        Ok(Token(text.to_owned()))
    }

    /// A fresh random token: 32 hex digits (128 bits) from the system's
    /// random source.
    pub fn generate() -> std::io::Result<Token> {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token in the file at `path`.
    pub fn read(path: &Path) -> Result<Token, TokenError> {
        let err = |why: String| TokenError::File {
            path: path.display().to_string(),
            why,
        };
        // Looked at before it is opened: a FIFO would block the open.
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => return Err(err("is not a regular file".into())),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(err(
                    "no such file; `retrylint serve --token-file` creates it".into(),
                ));
            }
            Err(e) => return Err(err(format!("cannot read: {e}"))),
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_TOKEN as u64 + 3).read_to_string(&mut text))
            .map_err(|e| err(format!("cannot read: {e}")))?;
        Token::new(&text).map_err(|e| err(e.to_string()))
    }

    /// The token in `path`, or a fresh one written there (owner-only) when
    /// the file does not exist. Two processes creating it at once agree:
    /// the file appears whole or not at all, and the later one reads it.
    pub fn read_or_create(path: &Path) -> Result<Token, TokenError> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Token::read(path);
        }
        let err = |why: String| TokenError::File {
            path: path.display().to_string(),
            why,
        };
        let token = Token::generate().map_err(|e| err(format!("cannot make a token: {e}")))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(".retrylint-token")
            .tempfile_in(dir)
            .map_err(|e| err(format!("cannot create: {e}")))?;
        std::io::Write::write_all(&mut tmp, format!("{}\n", token.0).as_bytes())
            .map_err(|e| err(format!("cannot write: {e}")))?;
        // A hard link fails when the name exists: no process replaces a
        // token another one already handed out.
        match std::fs::hard_link(tmp.path(), path) {
            Ok(()) => Ok(token),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Token::read(path),
            Err(e) => Err(err(format!("cannot create: {e}"))),
        }
    }

    /// The token as it is sent.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the `Authorization` header value `header` carries this
    /// token; the comparison takes the same time wherever they differ.
    pub fn admits(&self, header: &[u8]) -> bool {
        let Some(given) = header.strip_prefix(b"Bearer ") else {
            return false;
        };
        let want = self.0.as_bytes();
        let mut diff = given.len() ^ want.len();
        for (i, w) in want.iter().enumerate() {
            diff |= usize::from(given.get(i).copied().unwrap_or(0) ^ w);
        }
        diff == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_checked_and_never_shown() {
        assert_eq!(Token::new("short"), Err(TokenError::Short(5)));
        assert_eq!(
            Token::new(&"x".repeat(257)),
            Err(TokenError::Long(257)),
            "over the bound"
        );
        assert_eq!(Token::new("0123456789 abcdef"), Err(TokenError::Characters));
        let t = Token::new("0123456789abcdef\n").unwrap();
        assert_eq!(t.expose(), "0123456789abcdef");
        assert_eq!(format!("{t:?}"), "Token(…)");
        assert!(t.admits(b"Bearer 0123456789abcdef"));
        assert!(!t.admits(b"Bearer 0123456789abcdeF"));
        assert!(!t.admits(b"Bearer 0123456789abcdef0"));
        assert!(!t.admits(b"Bearer 0123456789abcde"));
        assert!(!t.admits(b"0123456789abcdef"));
        let g = Token::generate().unwrap();
        assert_eq!(g.expose().len(), 32);
        assert_ne!(g, Token::generate().unwrap());
    }

    #[test]
    fn a_token_file_is_made_once_and_shared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.token");
        let made = Token::read_or_create(&path).unwrap();
        assert_eq!(Token::read_or_create(&path).unwrap(), made);
        assert_eq!(Token::read(&path).unwrap(), made);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let e = Token::read(&dir.path().join("none")).unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
        std::fs::write(&path, "secret-but-short").unwrap();
        assert_eq!(Token::read(&path).unwrap().expose(), "secret-but-short");
        std::fs::write(&path, "tiny\n").unwrap();
        let e = Token::read(&path).unwrap_err().to_string();
        assert!(e.contains("fewer than 16") && !e.contains("tiny"), "{e}");
    }
}
