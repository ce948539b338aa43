//! Running the user's client: never through a shell (the program and its
//! arguments as given, `{url}` replaced in each argument and `RETRYLINT_URL`
//! in the environment), in a process group of its own, with a bounded wall
//! time. Whatever happens — a normal exit, the time bound, Ctrl-C — the
//! whole group is killed afterwards, so nothing the client started is left
//! running.

use std::process::Stdio;
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::record::Exit;

/// The client to probe: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// The placeholder replaced by the probe server's URL.
pub const URL_PLACEHOLDER: &str = "{url}";
/// The environment variable that carries the probe server's URL.
pub const URL_ENV: &str = "RETRYLINT_URL";
/// The environment variable that numbers the runs of one probe (from 0), for
/// a client that wants a seed of its own per run.
pub const RUN_ENV: &str = "RETRYLINT_RUN";

/// How much of the client's stderr is kept.
const STDERR_TAIL: usize = 4096;

impl ClientCommand {
    /// From `CMD ARGS…`; `None` when there is no program.
    pub fn from_argv(argv: &[String]) -> Option<ClientCommand> {
        let (program, args) = argv.split_first()?;
        Some(ClientCommand {
            program: program.clone(),
            args: args.to_vec(),
        })
    }

    /// The arguments with `{url}` replaced.
    pub(crate) fn args_for(&self, url: &str) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.replace(URL_PLACEHOLDER, url))
            .collect()
    }

    /// The command as a list, for reports.
    pub(crate) fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// How long a run may take.
#[derive(Debug, Clone)]
pub enum Bound {
    Fixed(Duration),
    /// Cut shorter while it runs: a hang run starts beside the others,
    /// before they have shown how long the client waits (the value is the
    /// bound from the run's start, and may be lowered once).
    Cut(watch::Receiver<Duration>),
}

impl Bound {
    /// Ends when a run started at `started` has had its time.
    async fn reached(self, started: Instant) {
        match self {
            Bound::Fixed(d) => tokio::time::sleep_until(started + d).await,
            Bound::Cut(mut cut) => loop {
                let d = *cut.borrow_and_update();
                tokio::select! {
                    _ = tokio::time::sleep_until(started + d) => return,
                    changed = cut.changed() => if changed.is_err() {
                        // No lower bound will come.
                        tokio::time::sleep_until(started + d).await;
                        return;
                    },
                }
            },
        }
    }
}

/// How one run ended.
#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub started: Instant,
    pub elapsed: Duration,
    pub stderr_tail: String,
    /// Why it could not be started, when it could not.
    pub error: Option<String>,
}

/// Runs `cmd` against `url` within `bound` as run number `run_no`,
/// with `env` added to its environment; `stop` kills it early.
pub(crate) async fn run(
    cmd: &ClientCommand,
    url: &str,
    env: &[(String, String)],
    run_no: u64,
    bound: Bound,
    stop: &CancellationToken,
) -> Finished {
    let mut command = tokio::process::Command::new(&cmd.program);
    command
        .args(cmd.args_for(url))
        .env(URL_ENV, url)
        .env(RUN_ENV, run_no.to_string())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Finished {
                exit: Exit::NotStarted,
                started,
                elapsed: started.elapsed(),
                stderr_tail: String::new(),
                error: Some(format!("cannot start `{}`: {e}", cmd.program)),
            };
        }
    };
    // The group's id is the child's pid (process_group(0)); taken now, as
    // `id()` is gone once the child has been reaped.
    let group = child.id().and_then(|id| Pid::from_raw(id as i32));
    let mut stderr = child.stderr.take();
    let tail = tokio::spawn(async move {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        if let Some(err) = stderr.as_mut() {
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * STDERR_TAIL {
                    kept.drain(..kept.len() - STDERR_TAIL);
                }
            }
        }
        kept
    });
    let exit = tokio::select! {
        status = child.wait() => match status {
            Ok(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(sig)) => Exit::Signal(sig),
                (None, None) => Exit::Code(-1),
            },
            Err(_) => Exit::Code(-1),
        },
        _ = bound.reached(started) => Exit::TimedOut,
        _ = stop.cancelled() => Exit::Interrupted,
    };
    let elapsed = started.elapsed();
    // Also after a normal exit: whatever the client left behind in its
    // group goes with it.
    kill_group(group);
    if exit == Exit::TimedOut || exit == Exit::Interrupted {
        let _ = child.kill().await;
    }
    // The pipe closes once the whole group is gone; a grandchild that left
    // the group could hold it open, so the wait is bounded.
    let kept = tokio::time::timeout(Duration::from_secs(1), tail)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Finished {
        exit,
        started,
        elapsed,
        stderr_tail: tail_text(&kept),
        error: None,
    }
}

fn kill_group(group: Option<Pid>) {
    if let Some(pid) = group {
        // ESRCH (the group is already empty) is the usual, good case.
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// The last `STDERR_TAIL` bytes as text, from a line start when possible.
fn tail_text(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(STDERR_TAIL);
    let text = String::from_utf8_lossy(&bytes[start..]);
    let text = if start > 0 {
        text.split_once('\n').map_or(&*text, |(_, rest)| rest)
    } else {
        &text
    };
    text.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_goes_into_every_argument_that_asks() {
        let cmd = ClientCommand::from_argv(&[
            "curl".into(),
            "-s".into(),
            "{url}/x".into(),
            "--data=u={url}".into(),
        ])
        .unwrap();
        assert_eq!(
            cmd.args_for("http://127.0.0.1:1"),
            ["-s", "http://127.0.0.1:1/x", "--data=u=http://127.0.0.1:1"]
        );
        assert!(ClientCommand::from_argv(&[]).is_none());
    }

    #[test]
    fn tails_keep_whole_lines() {
        let long = format!("{}\nlast line\n", "x".repeat(STDERR_TAIL + 10));
        assert_eq!(tail_text(long.as_bytes()), "last line");
        assert_eq!(tail_text(b"short\n"), "short");
    }

    #[tokio::test]
    async fn a_client_that_never_exits_is_killed_with_its_children() {
        let dir = std::env::temp_dir().join(format!("retrylint-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("child.pid");
        let cmd = ClientCommand {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                format!("sleep 60 & echo $! > {}; wait", pidfile.display()),
            ],
        };
        let done = run(
            &cmd,
            "http://127.0.0.1:9",
            &[],
            0,
            Bound::Fixed(Duration::from_millis(300)),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(done.exit, Exit::TimedOut);
        assert!(done.elapsed >= Duration::from_millis(300));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is gone (reaped by init, which may take a moment).
        let gone = async {
            while std::path::Path::new(&format!("/proc/{pid}")).exists()
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .unwrap_or_default()
                    .contains(") Z ")
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), gone)
            .await
            .expect("the grandchild outlived the kill");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_bound_cut_while_the_client_runs_ends_it_at_the_cut() {
        let cmd = ClientCommand {
            program: "sleep".into(),
            args: vec!["60".into()],
        };
        let (cut, bound) = watch::channel(Duration::from_secs(60));
        let stop = CancellationToken::new();
        let (done, ()) = tokio::join!(
            run(&cmd, "http://127.0.0.1:9", &[], 0, Bound::Cut(bound), &stop),
            async {
                cut.send_replace(Duration::from_millis(200));
            }
        );
        assert_eq!(done.exit, Exit::TimedOut);
        assert!(done.elapsed >= Duration::from_millis(200));
        assert!(done.elapsed < Duration::from_secs(30), "{:?}", done.elapsed);
    }

    #[tokio::test]
    async fn a_missing_program_is_reported() {
        let cmd = ClientCommand {
            program: "/no/such/client".into(),
            args: vec![],
        };
        let done = run(
            &cmd,
            "http://127.0.0.1:9",
            &[],
            0,
            Bound::Fixed(Duration::from_secs(1)),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(done.exit, Exit::NotStarted);
        assert!(done.error.unwrap().contains("/no/such/client"));
    }
}
