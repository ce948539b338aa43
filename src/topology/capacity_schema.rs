//! Reading a service's `capacity:`: the seed's overload model (`64`, or
//! `{ overlap: 64 }`), or workers with a bounded queue (`{ workers: 10,
//! queue: 100, discipline: lifo, reject_status: 503, retry_after: 1s,
//! drop_expired: true }`).

use super::model::{Discipline, Queueing};
use crate::input::error::LoadError;
use crate::input::fields::Fields;
use crate::input::yaml::{Node, Value};

const KEYS: &[&str] = &[
    "overlap",
    "workers",
    "queue",
    "discipline",
    "reject_status",
    "retry_after",
    "drop_expired",
];

pub(super) enum Capacity {
    Overlap(u32),
    Queueing(Queueing),
}

pub(super) fn read_capacity(f: Fields, node: &Node) -> Result<Capacity, LoadError> {
    let max = i128::from(u32::MAX);
    if !matches!(node.value, Value::Map(_)) {
        return Ok(Capacity::Overlap(f.int(node, "capacity", 1, max)? as u32));
    }
    let m = f.map(node, "a capacity", KEYS)?;
    if let Some(v) = m.get("overlap") {
        if let Some((k, _)) = m
            .entries()
            .find(|(k, _)| !matches!(&k.value, Value::Str(s) if s == "overlap"))
        {
            return Err(f
                .error(k.pos, "`overlap` is the seed's overload model on its own")
                .with_help("write `capacity: { overlap: 4 }`, or `{ workers: 10, queue: 100 }` for a server with a queue"));
        }
        return Ok(Capacity::Overlap(f.int(v, "overlap", 1, max)? as u32));
    }
    let Some(w) = m.get("workers") else {
        return Err(f
            .error(node.pos, "a capacity map needs `workers:` (or `overlap:`)")
            .with_help("write `capacity: { workers: 10, queue: 100 }`"));
    };
    let workers = f.int(w, "workers", 1, max)? as u32;
    let queue = m
        .get("queue")
        .map(|v| f.int(v, "queue", 0, max))
        .transpose()?
        .map_or(0, |q| q as u32);
    let discipline = match m.get("discipline") {
        None => Discipline::Fifo,
        Some(v) => match f.str(v, "`discipline`")? {
            "fifo" => Discipline::Fifo,
            "lifo" => Discipline::Lifo,
            other => {
                return Err(f
                    .error(v.pos, format!("unknown queue discipline `{other}`"))
                    .with_help("use fifo (the oldest first) or lifo (the newest first)"));
            }
        },
    };
    let reject_status = m
        .get("reject_status")
        .map(|v| f.int(v, "reject_status", 400, 599))
        .transpose()?
        .map_or(503, |s| s as u16);
    let retry_after = m
        .get("retry_after")
        .map(|v| f.duration(v, "retry_after"))
        .transpose()?;
    let drop_expired = m
        .get("drop_expired")
        .map(|v| f.bool(v, "drop_expired"))
        .transpose()?
        .unwrap_or(false);
    Ok(Capacity::Queueing(Queueing {
        workers,
        queue,
        discipline,
        reject_status,
        retry_after,
        drop_expired,
    }))
}
