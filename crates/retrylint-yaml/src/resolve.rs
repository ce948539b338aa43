//! Tags and plain scalars, resolved as serde-saphyr resolves them for an untyped value.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{ScalarStyle, Tag};

use super::text::{Interner, Text};
use super::{Pos, SyntaxError, Value, error};

/// serde-saphyr's spelling of `yaml.org` tags.
const YAML_NS: &str = "tag:yaml.org,2002:";

// ---------------------------------------------------------------------------
// Tags, as serde-saphyr classifies them.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum TagKind {
    None,
    Int,
    Float,
    Bool,
    Null,
    Seq,
    Map,
    TimeStamp,
    Time,
    Binary,
    String,
    Merge,
    Value,
    NonSpecific,
    Include,
    Degrees,
    Radians,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum NodeKind {
    Scalar,
    Seq,
    Map,
}

impl TagKind {
    pub(super) fn of(tag: Option<&Tag>) -> TagKind {
        let Some(tag) = tag else {
            return TagKind::None;
        };
        for prefix in [
            "!include",
            "tag:yaml.org,2002:include",
            "tag:yaml.org,2002:!include",
        ] {
            if let Some(rest) = tag.suffix_in_namespace(prefix)
                && (rest.is_empty() || rest.starts_with('#'))
            {
                return TagKind::Include;
            }
        }
        if let Some(core) = tag.core_suffix().and_then(core_suffix_kind) {
            return core;
        }
        if let Some(suffix) = tag.suffix_in_namespace(YAML_NS) {
            match suffix.as_ref() {
                "merge" => return TagKind::Merge,
                "value" => return TagKind::Value,
                s => return tag_name_kind(s.strip_prefix('!').unwrap_or(s)),
            }
        }
        let Some(suffix) = tag.suffix_in_namespace("!") else {
            return TagKind::Other;
        };
        match suffix.as_ref() {
            "" | "!" => TagKind::NonSpecific,
            "!timestamp" => TagKind::TimeStamp,
            "!binary" => TagKind::Binary,
            name => match name.strip_prefix('!') {
                Some(name) => core_suffix_kind(name).unwrap_or(TagKind::Other),
                None => tag_name_kind(name),
            },
        }
    }

    fn requires(self) -> Option<NodeKind> {
        match self {
            TagKind::Seq => Some(NodeKind::Seq),
            TagKind::Map => Some(NodeKind::Map),
            TagKind::None | TagKind::NonSpecific | TagKind::Other => None,
            _ => Some(NodeKind::Scalar),
        }
    }

    fn forces_string(self) -> bool {
        matches!(self, TagKind::String | TagKind::NonSpecific)
    }

    fn is_core(self) -> bool {
        matches!(
            self,
            TagKind::Int
                | TagKind::Float
                | TagKind::Bool
                | TagKind::Null
                | TagKind::Seq
                | TagKind::Map
                | TagKind::String
        )
    }

    pub(super) fn can_parse_into_string(self) -> bool {
        matches!(
            self,
            TagKind::None
                | TagKind::String
                | TagKind::Merge
                | TagKind::Value
                | TagKind::Other
                | TagKind::Include
                | TagKind::NonSpecific
        )
    }
}

fn core_suffix_kind(suffix: &str) -> Option<TagKind> {
    Some(match suffix {
        "null" => TagKind::Null,
        "bool" => TagKind::Bool,
        "int" => TagKind::Int,
        "float" => TagKind::Float,
        "map" => TagKind::Map,
        "seq" => TagKind::Seq,
        "str" => TagKind::String,
        _ => return None,
    })
}

fn tag_name_kind(name: &str) -> TagKind {
    match name {
        "int" => TagKind::Int,
        "float" => TagKind::Float,
        "bool" => TagKind::Bool,
        "null" => TagKind::Null,
        "seq" => TagKind::Seq,
        "map" => TagKind::Map,
        "str" => TagKind::String,
        "timestamp" => TagKind::TimeStamp,
        "time" => TagKind::Time,
        "binary" => TagKind::Binary,
        "include" => TagKind::Include,
        "degrees" => TagKind::Degrees,
        "radians" => TagKind::Radians,
        _ => TagKind::Other,
    }
}

/// Refuses a tag that names another kind of node (`!!map 5`, `!!str [1]`).
pub(super) fn check_tag(
    tag: Option<&Tag>,
    kind: TagKind,
    node: NodeKind,
    pos: Pos,
) -> Result<(), SyntaxError> {
    match kind.requires() {
        Some(required) if required != node => {
            let tag = tag.map(Tag::original).unwrap_or_default();
            if kind == TagKind::Include {
                Err(error(pos, format!("unsupported `{tag}` form")))
            } else {
                Err(error(pos, format!("unsupported tag `{tag}`")))
            }
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Scalars, resolved as serde-saphyr's `deserialize_any` resolves them.

pub(super) fn yaml_trim(s: &str) -> &str {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let bytes = s.as_bytes();
    if bytes.first().is_some_and(space) || bytes.last().is_some_and(space) {
        s.trim_matches([' ', '\t', '\r', '\n'])
    } else {
        s
    }
}

fn parse_yaml11_bool(s: &str) -> Option<bool> {
    let t = yaml_trim(s);
    // Longer than `false`: no boolean, and most strings are.
    if t.len() > 5 {
        return None;
    }
    let is = |w: &str| t.eq_ignore_ascii_case(w);
    if is("true") || is("yes") || is("y") || is("on") {
        Some(true)
    } else if is("false") || is("no") || is("n") || is("off") {
        Some(false)
    } else {
        None
    }
}

/// Digits with single underscores between them, in `radix`.
fn parse_digits(digits: &str, radix: u32) -> Option<u128> {
    let bytes = digits.as_bytes();
    let mut val: u128 = 0;
    let mut saw = false;
    for (i, &b) in bytes.iter().enumerate() {
        let d = match b {
            b'_' => {
                let prev_ok = i > 0 && bytes[i - 1] != b'_';
                let next_ok = i + 1 < bytes.len() && bytes[i + 1] != b'_';
                if !prev_ok || !next_ok {
                    return None;
                }
                continue;
            }
            b'0'..=b'9' => u32::from(b - b'0'),
            b'a'..=b'f' if radix > 10 => 10 + u32::from(b - b'a'),
            b'A'..=b'F' if radix > 10 => 10 + u32::from(b - b'A'),
            _ => return None,
        };
        if d >= radix {
            return None;
        }
        val = val
            .checked_mul(u128::from(radix))?
            .checked_add(u128::from(d))?;
        saw = true;
    }
    saw.then_some(val)
}

fn radix_and_digits(rest: &str) -> (u32, &str) {
    if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
        (2, r)
    } else {
        (10, rest)
    }
}

/// An integer with an optional sign: (negative, magnitude), `-0` not negative.
pub(super) fn parse_int_signed(s: &str) -> Option<i128> {
    let t = yaml_trim(s);
    let (neg, rest) = match t.strip_prefix('+') {
        Some(r) => (false, r),
        None => match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t),
        },
    };
    let (radix, digits) = radix_and_digits(rest);
    if radix == 10 && digits.starts_with('0') && digits != "0" {
        return None;
    }
    let mag = parse_digits(digits, radix)?;
    if neg {
        if mag == (i128::MAX as u128) + 1 {
            Some(i128::MIN)
        } else {
            i128::try_from(mag).ok()?.checked_neg()
        }
    } else {
        i128::try_from(mag).ok()
    }
}

pub(super) fn parse_int_unsigned(s: &str) -> Option<u128> {
    let t = yaml_trim(s);
    if t.starts_with('-') {
        return None;
    }
    let rest = t.strip_prefix('+').unwrap_or(t);
    let (radix, digits) = radix_and_digits(rest);
    if radix == 10 && digits.starts_with('0') && digits != "0" {
        return None;
    }
    parse_digits(digits, radix)
}

fn is_signed_nan(t: &str) -> bool {
    t.strip_prefix(['+', '-'])
        .is_some_and(|u| matches!(u, ".nan" | ".NaN" | ".NAN"))
}

fn leading_zero_decimal(t: &str) -> bool {
    let s = yaml_trim(t);
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

fn parse_yaml12_float(s: &str, tag: TagKind) -> Option<f64> {
    let t = yaml_trim(s);
    if tag == TagKind::Float && is_signed_nan(t) {
        return Some(if t.starts_with('-') {
            -f64::NAN
        } else {
            f64::NAN
        });
    }
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    match unsigned {
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        ".inf" | ".Inf" | ".INF" if negative => return Some(f64::NEG_INFINITY),
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        _ => {}
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A YAML float, or a numeral so large it overflows to infinity.
fn try_parse_float(s: &str, tag: TagKind) -> Option<f64> {
    if let Some(v) = parse_yaml12_float(s, tag) {
        return Some(v);
    }
    let t = yaml_trim(s);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !unsigned.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_infinite())
}

pub(super) fn scalar_is_nullish(value: &str, style: ScalarStyle) -> bool {
    style == ScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

pub(super) fn scalar_is_null(tag: TagKind, value: &str, style: ScalarStyle) -> bool {
    tag == TagKind::Null
        || (!tag.is_core()
            && !tag.forces_string()
            && !matches!(
                tag,
                TagKind::Binary
                    | TagKind::TimeStamp
                    | TagKind::Time
                    | TagKind::Degrees
                    | TagKind::Radians
            )
            && scalar_is_nullish(value, style))
}

fn typed_float(value: f64, raw: &str, pos: Pos) -> Result<Value, SyntaxError> {
    if value.is_finite() {
        Ok(Value::Float(value))
    } else {
        Err(error(
            pos,
            format!("non-finite float `{raw}` rejected by the configured policy"),
        ))
    }
}

/// Every byte an integer or float below may hold: digits, signs, `_`, `.`, the
/// radix prefixes, hexadecimal digits and exponents, and `.inf` / `.nan`.
const NUMBER_CHARS: &[u8] = b"0123456789abcdefABCDEF_+-.xXoOiInN";

/// [`NUMBER_CHARS`] as a table, so that each byte of hundreds of thousands of
/// scalars is one lookup.
const NUMBER_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < NUMBER_CHARS.len() {
        table[NUMBER_CHARS[i] as usize] = true;
        i += 1;
    }
    table
};

#[cfg(test)]
#[test]
fn number_bytes_are_those_listed() {
    for b in 0..=255u8 {
        assert_eq!(
            NUMBER_BYTES[usize::from(b)],
            NUMBER_CHARS.contains(&b),
            "byte {b:#x}"
        );
    }
}

/// The shared text of a string scalar.
fn text<'a>(value: Cow<'a, str>, interner: &mut Interner<'a>) -> Text {
    match value {
        Cow::Borrowed(s) => interner.intern(s),
        Cow::Owned(s) => Text::from(s),
    }
}

pub(super) fn resolve_scalar<'a>(
    value: Cow<'a, str>,
    style: ScalarStyle,
    tag: TagKind,
    pos: Pos,
    interner: &mut Interner<'a>,
) -> Result<Value, SyntaxError> {
    match tag {
        TagKind::Null => return Ok(Value::Null),
        TagKind::Bool => {
            return parse_yaml11_bool(&value)
                .map(Value::Bool)
                .ok_or_else(|| error(pos, "invalid boolean"));
        }
        TagKind::Int if yaml_trim(&value).starts_with('-') => {
            return parse_int_signed(&value)
                .filter(|v| i64::try_from(*v).is_ok())
                .map(Value::Int)
                .ok_or_else(|| error(pos, "invalid i64"));
        }
        TagKind::Int => {
            return parse_int_unsigned(&value)
                .and_then(|v| u64::try_from(v).ok())
                .map(|v| Value::Int(v.into()))
                .ok_or_else(|| error(pos, "invalid u64"));
        }
        TagKind::Float => {
            let v =
                try_parse_float(&value, tag).ok_or_else(|| error(pos, "invalid floating point"))?;
            return typed_float(v, &value, pos);
        }
        TagKind::Time | TagKind::Degrees | TagKind::Radians => {
            return Err(error(pos, "invalid floating point"));
        }
        _ => {}
    }
    if scalar_is_null(tag, &value, style) {
        return Ok(Value::Null);
    }
    if style != ScalarStyle::Plain
        || !tag.can_parse_into_string()
        || tag == TagKind::Binary
        || tag.forces_string()
    {
        if tag == TagKind::Binary {
            let bytes =
                decode_base64(&value).ok_or_else(|| error(pos, "invalid !!binary base64"))?;
            return String::from_utf8(bytes)
                .map(|s| Value::Str(s.into()))
                .map_err(|_| {
                    error(
                        pos,
                        "!!binary scalar is not valid UTF-8 so cannot be stored into string",
                    )
                });
        }
        if !tag.can_parse_into_string() {
            return Err(error(pos, "cannot deserialize tagged scalar into string"));
        }
        return Ok(Value::Str(text(value, interner)));
    }
    // Most plain scalars are words: a letter starts no number (`inf` and `nan`
    // are strings here), so a word is a boolean or a string.
    if value
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
    {
        return Ok(match parse_yaml11_bool(&value) {
            Some(b) => Value::Bool(b),
            None => Value::Str(text(value, interner)),
        });
    }
    // Durations and the like (`250ms`): a character no number has.
    if !value.bytes().all(|b| NUMBER_BYTES[usize::from(b)]) {
        return Ok(Value::Str(text(value, interner)));
    }
    if let Some(b) = parse_yaml11_bool(&value) {
        return Ok(Value::Bool(b));
    }
    let t = yaml_trim(&value);
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let uppercase_radix = matches!(unsigned.as_bytes(), [b'0', b'X' | b'O' | b'B', ..]);
    if uppercase_radix || is_signed_nan(t) {
        return Ok(Value::Str(text(value, interner)));
    }
    if t.starts_with('-') {
        if !leading_zero_decimal(t)
            && let Some(v) = parse_int_signed(t).filter(|v| i64::try_from(*v).is_ok())
        {
            return Ok(Value::Int(v));
        }
    } else if let Some(v) = parse_int_unsigned(t).and_then(|v| u64::try_from(v).ok()) {
        return Ok(Value::Int(v.into()));
    }
    if let Some(v) = try_parse_float(&value, tag) {
        return typed_float(v, &value, pos);
    }
    Ok(Value::Str(text(value, interner)))
}

/// `!!binary` text: base64 with ASCII whitespace allowed anywhere.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    fn val(b: u8) -> Option<u32> {
        Some(u32::from(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    let cleaned: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !cleaned.len().is_multiple_of(4) {
        return None;
    }
    let chunks = cleaned.chunks_exact(4);
    let total = chunks.len();
    let mut out = Vec::with_capacity(total * 3);
    for (i, c) in chunks.enumerate() {
        let pad = c.iter().rev().take_while(|&&b| b == b'=').count();
        if (pad > 0 && i + 1 != total) || pad > 2 {
            return None;
        }
        let a = val(c[0])?;
        let b = val(c[1])?;
        let c2 = match c[2] {
            b'=' if pad >= 2 => 0,
            b'=' => return None,
            x => val(x)?,
        };
        let d = match c[3] {
            b'=' if pad > 0 => 0,
            b'=' => return None,
            x => val(x)?,
        };
        if (pad == 2 && b & 0x0F != 0) || (pad == 1 && c2 & 0x03 != 0) {
            return None;
        }
        let triple = (a << 18) | (b << 12) | (c2 << 6) | d;
        out.push((triple >> 16) as u8);
        if pad < 2 {
            out.push((triple >> 8) as u8);
        }
        if pad == 0 {
            out.push(triple as u8);
        }
    }
    Some(out)
}
