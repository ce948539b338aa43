//! The run's token flags, shared by `serve` and `drive`: where the token
//! that guards start and stop on the admin ports comes from.

use std::path::PathBuf;

use clap::Args;

use super::outcome::Failure;
use retrylint::chaos::fleet::token::{TOKEN_ENV, Token};

#[derive(Args)]
pub struct TokenArgs {
    /// The run's token (16 to 256 visible characters): `drive` and every
    /// `serve` need the same one to start and stop runs. Other users of
    /// the machine can see a flag in `ps`; prefer --token-file or the
    /// RETRYLINT_TOKEN environment variable.
    #[arg(long, value_name = "TOKEN", conflicts_with = "token_file")]
    pub token: Option<String>,
    /// A file holding the run's token. Under `serve`, a file that does not
    /// exist yet is created with a random token readable only by its owner:
    /// point every `serve` and the `drive` at the same file.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token from the flags or the environment; `create`: a missing
    /// --token-file is made. `None` when none was given.
    pub fn token(&self, create: bool) -> Result<Option<Token>, Failure> {
        let usage =
            |e: retrylint::chaos::TokenError, from: &str| Failure::Usage(format!("{from}: {e}"));
        if let Some(t) = &self.token {
            return Token::new(t).map(Some).map_err(|e| usage(e, "--token"));
        }
        if let Some(path) = &self.token_file {
            let read = if create {
                Token::read_or_create(path)
            } else {
                Token::read(path)
            };
            return read.map(Some).map_err(|e| usage(e, "--token-file"));
        }
        match std::env::var(TOKEN_ENV) {
            Ok(t) => Token::new(&t).map(Some).map_err(|e| usage(e, TOKEN_ENV)),
            Err(_) => Ok(None),
        }
    }
}

/// What to write when no token was given.
pub fn missing(command: &str) -> Failure {
    Failure::Usage(format!(
        "`{command}` needs the run's token, the one every `serve` and the `drive` share: pass --token-file FILE (`serve` creates it when it does not exist), or set {TOKEN_ENV}, or pass --token TOKEN"
    ))
}
