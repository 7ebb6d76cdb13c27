//! Tokens to text, one token at a time: incremental detokenization and stop strings.
//!
//! A token need not end on a character (byte-level BPE splits UTF-8 sequences across tokens)
//! and a SentencePiece token's leading space depends on what precedes it, so a token cannot
//! be decoded alone. As Hugging Face's text-generation-inference does, we decode a short
//! window twice — the tokens already shown, then those plus the new ones — and emit the
//! difference once it no longer ends in a replacement character. The window starts with the
//! prompt's last few tokens so that the first generated token has its context.
//!
//! Text that could be the start of a stop string is held back until it is not, so a stream
//! never shows a stop string's prefix that the final text would not contain.

use crate::scheduler::{BoxError, Codec};

/// Prompt tokens kept as the decoding window's left context.
const CONTEXT_TOKENS: usize = 5;

/// The text of one completion as its tokens arrive.
pub(crate) struct TextStream {
    tokens: Vec<u32>,
    /// Window start: tokens before it are decoded for good.
    prefix_offset: usize,
    /// Tokens before it have been turned into text.
    read_offset: usize,
    /// The completion's text so far (never a stop string or what follows one).
    text: String,
    /// Bytes of `text` handed out.
    emitted: usize,
    stops: Vec<String>,
    stopped: bool,
}

impl TextStream {
    pub(crate) fn new(prompt: &[u32], stops: Vec<String>) -> Self {
        let context = &prompt[prompt.len().saturating_sub(CONTEXT_TOKENS)..];
        TextStream {
            tokens: context.to_vec(),
            prefix_offset: 0,
            read_offset: context.len(),
            text: String::new(),
            emitted: 0,
            stops,
            stopped: false,
        }
    }

    /// Whether a stop string has been met (the completion is over).
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    /// Adds a token; returns the text that may now be shown (possibly empty).
    pub(crate) fn push(&mut self, codec: &dyn Codec, token: u32) -> Result<String, BoxError> {
        if self.stopped {
            return Ok(String::new());
        }
        self.tokens.push(token);
        let prefix = codec.decode(&self.tokens[self.prefix_offset..self.read_offset])?;
        let full = codec.decode(&self.tokens[self.prefix_offset..])?;
        if full.len() > prefix.len() && !full.ends_with('\u{FFFD}') {
            if let Some(delta) = full.get(prefix.len()..) {
                self.append(delta);
                self.prefix_offset = self.read_offset;
                self.read_offset = self.tokens.len();
                // The window only needs its last few tokens: keep the buffer bounded.
                if self.prefix_offset > 4 * CONTEXT_TOKENS {
                    let cut = self.prefix_offset;
                    self.tokens.drain(..cut);
                    self.prefix_offset = 0;
                    self.read_offset -= cut;
                }
            }
        }
        Ok(self.take(false))
    }

    /// Ends the completion: decodes what is pending (an incomplete character becomes U+FFFD)
    /// and returns the rest of the text, held-back stop prefixes included.
    pub(crate) fn finish(&mut self, codec: &dyn Codec) -> Result<String, BoxError> {
        if !self.stopped && self.read_offset < self.tokens.len() {
            let prefix = codec.decode(&self.tokens[self.prefix_offset..self.read_offset])?;
            let full = codec.decode(&self.tokens[self.prefix_offset..])?;
            if let Some(delta) = full.get(prefix.len()..) {
                self.append(delta);
            }
            self.read_offset = self.tokens.len();
        }
        Ok(self.take(true))
    }

    fn append(&mut self, delta: &str) {
        let before = self.text.len();
        self.text.push_str(delta);
        // A stop string may straddle the old text and the new: search from far enough back.
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        let mut from = before.saturating_sub(longest.saturating_sub(1));
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        let hit = self
            .stops
            .iter()
            .filter_map(|s| self.text[from..].find(s.as_str()).map(|i| from + i))
            .min();
        if let Some(at) = hit {
            self.text.truncate(at);
            self.stopped = true;
        }
    }

    /// Text not yet handed out, less (unless `all`) a tail that could begin a stop string.
    fn take(&mut self, all: bool) -> String {
        let mut end = self.text.len();
        if !all && !self.stopped {
            end -= self.held_back();
        }
        // `emitted <= end` holds (a stop string's start was held back, never shown); `get`
        // keeps a broken invariant an empty piece rather than a panic on the engine thread.
        let out = self
            .text
            .get(self.emitted..end)
            .unwrap_or_default()
            .to_string();
        self.emitted = end.max(self.emitted);
        out
    }

    /// Bytes at the end of the text that are a proper prefix of some stop string.
    fn held_back(&self) -> usize {
        let tail = &self.text[self.emitted..];
        let mut held = 0;
        for stop in &self.stops {
            for (k, _) in stop.char_indices().skip(1) {
                if k > held && tail.ends_with(&stop[..k]) {
                    held = k;
                }
            }
        }
        held
    }

    /// The whole text so far (shown or held back).
    #[cfg(test)]
    pub(crate) fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ByteCodec;

    fn run(prompt: &str, generated: &str, stops: &[&str]) -> (Vec<String>, bool, String) {
        let codec = ByteCodec;
        let prompt: Vec<u32> = prompt.bytes().map(u32::from).collect();
        let mut s = TextStream::new(&prompt, stops.iter().map(|s| s.to_string()).collect());
        let mut pieces = Vec::new();
        for b in generated.bytes() {
            pieces.push(s.push(&codec, u32::from(b)).unwrap());
            if s.stopped() {
                break;
            }
        }
        pieces.push(s.finish(&codec).unwrap());
        (pieces, s.stopped(), s.text().to_string())
    }

    #[test]
    fn multibyte_characters_wait_for_their_last_byte() {
        let (pieces, stopped, text) = run("ab", "é€x", &[]);
        assert!(!stopped);
        assert_eq!(text, "é€x");
        // é is two bytes, € three: nothing is shown until a character is whole.
        assert_eq!(pieces, ["", "é", "", "", "€", "x", ""]);
    }

    #[test]
    fn stop_strings_cut_the_text_and_their_prefixes_are_held_back() {
        let (pieces, stopped, text) = run("p", "hello\n\nworld", &["\n\n"]);
        assert!(stopped);
        assert_eq!(text, "hello");
        assert_eq!(pieces.concat(), "hello");
        // The first newline is held until the second completes the stop string.
        assert_eq!(pieces[5], "");
        let (pieces, stopped, _) = run("p", "ab\ncd", &["\n\n"]);
        assert!(!stopped);
        assert_eq!(pieces.concat(), "ab\ncd");
        assert_eq!(pieces[2..4], ["", "\nc"]);
    }

    #[test]
    fn a_stop_string_split_over_many_tokens_and_the_earliest_wins() {
        let (pieces, stopped, text) = run("p", "xxENDyySTOP", &["STOP", "END"]);
        assert!(stopped);
        assert_eq!((text.as_str(), pieces.concat().as_str()), ("xx", "xx"));
    }

    #[test]
    fn a_held_prefix_is_released_at_the_end() {
        let (pieces, stopped, text) = run("p", "abEN", &["END"]);
        assert!(!stopped);
        assert_eq!(text, "abEN");
        assert_eq!(pieces.last().unwrap(), "EN");
    }

    #[test]
    fn an_incomplete_character_at_the_end_becomes_a_replacement() {
        let (pieces, _, _) = run("", "a\u{e9}", &[]);
        let codec = ByteCodec;
        let mut s = TextStream::new(&[], vec![]);
        s.push(&codec, 0xC3).unwrap();
        assert_eq!(s.finish(&codec).unwrap(), "\u{FFFD}");
        assert_eq!(pieces.concat(), "aé");
    }
}
