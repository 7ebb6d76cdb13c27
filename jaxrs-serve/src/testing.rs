//! Deterministic stand-ins for the engine and the tokenizer, for the crate's unit tests: the
//! scheduler's bookkeeping (admission, release, stop strings, capacity, timeouts,
//! cancellation) is checked here without XLA; the integration tests run the real engine.

use std::time::Duration;

use crate::scheduler::{Backend, BoxError, Codec, Sampling};

/// One token per byte; 256 is the end of a sequence.
pub(crate) struct ByteCodec;

impl Codec for ByteCodec {
    fn encode(&self, text: &str) -> Result<Vec<u32>, BoxError> {
        Ok(text.bytes().map(u32::from).collect())
    }

    fn decode(&self, ids: &[u32]) -> Result<String, BoxError> {
        let bytes: Vec<u8> = ids.iter().filter(|&&t| t < 256).map(|&t| t as u8).collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn stop_token_ids(&self) -> &[u32] {
        &[256]
    }

    fn start_token_id(&self) -> Option<u32> {
        Some(256)
    }
}

/// A "model" whose next token is a function of the slot's cache alone (so a greedy
/// completion does not depend on what else is batched), writing lowercase letters and, after
/// `eos_after` generated tokens, the end-of-sequence token.
pub(crate) struct MockBackend {
    pub rows: Vec<Option<Vec<u32>>>,
    pub pending: Vec<u32>,
    pub capacity: usize,
    pub step_delay: Duration,
    pub eos_after: Option<usize>,
    pub generated: Vec<usize>,
}

impl MockBackend {
    pub fn new(slots: usize, capacity: usize) -> Self {
        MockBackend {
            rows: vec![None; slots],
            pending: vec![0; slots],
            capacity,
            step_delay: Duration::ZERO,
            eos_after: None,
            generated: vec![0; slots],
        }
    }

    fn next(&self, slot: usize, cache: &[u32]) -> u32 {
        if self.eos_after.is_some_and(|n| self.generated[slot] >= n) {
            return 256;
        }
        let h = cache
            .iter()
            .fold(7u64, |h, &t| h.wrapping_mul(31).wrapping_add(u64::from(t)));
        u32::from(b'a') + (h % 26) as u32
    }
}

impl Backend for MockBackend {
    fn slots(&self) -> usize {
        self.rows.len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn vocab_size(&self) -> usize {
        257
    }

    fn free_slots(&self) -> usize {
        self.rows.iter().filter(|r| r.is_none()).count()
    }

    fn insert(&mut self, prompt: &[u32], _: &Sampling) -> Result<(usize, u32), BoxError> {
        let slot = self
            .rows
            .iter()
            .position(Option::is_none)
            .ok_or("no free slot")?;
        if prompt.is_empty() || prompt.len() >= self.capacity {
            return Err("bad prompt length".into());
        }
        self.generated[slot] = 0;
        let token = self.next(slot, prompt);
        self.rows[slot] = Some(prompt.to_vec());
        self.pending[slot] = token;
        self.generated[slot] = 1;
        Ok((slot, token))
    }

    fn step(&mut self) -> Result<Vec<(usize, u32)>, BoxError> {
        std::thread::sleep(self.step_delay);
        let mut out = Vec::new();
        for slot in 0..self.rows.len() {
            let Some(mut cache) = self.rows[slot].take() else {
                continue;
            };
            if cache.len() >= self.capacity {
                return Err(format!("slot {slot} is full").into());
            }
            cache.push(self.pending[slot]);
            let token = self.next(slot, &cache);
            self.rows[slot] = Some(cache);
            self.pending[slot] = token;
            self.generated[slot] += 1;
            out.push((slot, token));
        }
        Ok(out)
    }

    fn position(&self, slot: usize) -> usize {
        self.rows[slot].as_ref().map_or(0, Vec::len)
    }

    fn release(&mut self, slot: usize) {
        self.rows[slot] = None;
    }
}
