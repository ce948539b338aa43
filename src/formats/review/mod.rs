//! The architecture review: the HTML page, its Markdown and the PR comments.

pub mod comments;
pub mod html;
pub mod markdown;

use crate::review::Review;

use super::{Reporter, Style};

/// How the architecture review can be printed (its PR comments are a file of
/// their own, `comments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewFormat {
    /// One self-contained page: graph, findings, figures, the storm in time.
    Html,
    /// A PR comment: verdict, before/after table, mermaid graph.
    Markdown,
}

fn reporter(format: ReviewFormat) -> &'static dyn Reporter<Review> {
    match format {
        ReviewFormat::Html => &html::ReviewHtml,
        ReviewFormat::Markdown => &markdown::ReviewMarkdown,
    }
}

/// Renders the review in `format`.
pub fn render_review(format: ReviewFormat, review: &Review) -> String {
    reporter(format).render(review, Style::default())
}
