//! Load: the driver that sends user requests into the entry, its lean
//! HTTP/1.1 client, one standalone retrying request (the probe's reference
//! client), and the HTTP/1.1 parser's fuzz hook.

pub(super) mod drive_url;
pub(super) mod driver;
pub mod fuzz_hook;
pub(super) mod http1;
pub(super) mod standalone;
