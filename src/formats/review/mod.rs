//! The architecture review: the HTML page, its Markdown and the PR comments.

pub mod comments;
pub mod html;
pub mod markdown;
