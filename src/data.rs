//! Data for training: readers for the small data sets of `../shared/data` (MNIST-5k, UCI
//! digits, tiny Shakespeare), batching in a key-driven shuffled order, padding of
//! variable-length sequences with masks, random windows of a text for language models, and a
//! host-to-device prefetch of the next batch.
//!
//! Everything here is written with jaxrs's public API, as a user could have written it.
//!
//! ```
//! use jaxrs::data;
//!
//! let (train, held_out) = data::read_mnist(data::data_dir().join(data::MNIST_5K))?.split(4500);
//! assert_eq!((train.len(), held_out.len()), (4500, 500));
//! let key = jaxrs::random::key(0);
//! for (step, batch) in train.epoch(&key, 0, 100, data::Remainder::Drop).enumerate() {
//!     assert_eq!((batch.x.shape(), batch.y.shape()), (&[100, 784][..], &[100][..]));
//!     if step == 2 {
//!         break;
//!     }
//! }
//! # Ok::<(), std::io::Error>(())
//! ```

use crate::Array;
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The file name of the 5,000 MNIST digits (28x28, grey levels 0-255) in [`data_dir`].
pub const MNIST_5K: &str = "mnist_5k.csv.gz";
/// The file name of the 1,797 UCI optical digits (8x8, grey levels 0-16) in [`data_dir`].
pub const DIGITS: &str = "digits.csv.gz";
/// The file name of the tiny Shakespeare corpus in [`data_dir`].
pub const TINY_SHAKESPEARE: &str = "tinyshakespeare.txt";

/// The folder holding the data sets: `JAXRS_DATA_DIR` if set, else `../shared/data` relative
/// to the working directory if it exists there (the layout of the repository and CI), else
/// `../shared/data` next to jaxrs's own sources.
///
/// ```
/// assert!(jaxrs::data::data_dir().join(jaxrs::data::DIGITS).exists());
/// ```
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("JAXRS_DATA_DIR") {
        return dir.into();
    }
    let relative = PathBuf::from("../shared/data");
    if relative.is_dir() {
        return relative;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data"))
}

/// A set of labelled images held on the host: pixels as f32 scaled to `[0, 1]`, row-major
/// `[len, pixels]`, and labels as i32. Cloning is cheap (the rows are shared).
#[derive(Clone)]
pub struct ImageSet {
    images: Arc<[f32]>,
    labels: Arc<[i32]>,
    image_shape: [usize; 2],
}

/// One batch of an [`ImageSet`] on the device: `x` `f32[batch, pixels]`, `y` `i32[batch]`, and
/// `mask` `f32[batch]`, 1 for real rows and 0 for the rows that pad a short last batch.
#[derive(Clone)]
pub struct Batch {
    /// The images, `f32[batch, pixels]`.
    pub x: Array,
    /// The labels, `i32[batch]`.
    pub y: Array,
    /// 1.0 for real rows, 0.0 for padding rows (see [`Remainder::Pad`]), `f32[batch]`.
    pub mask: Array,
}

impl ImageSet {
    /// An image set from row-major pixels (already scaled) and labels.
    ///
    /// ```
    /// let set = jaxrs::data::ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// assert_eq!((set.len(), set.pixels()), (2, 2));
    /// ```
    #[track_caller]
    pub fn new(images: Vec<f32>, labels: Vec<i32>, image_shape: [usize; 2]) -> ImageSet {
        let pixels = image_shape[0] * image_shape[1];
        assert_eq!(
            images.len(),
            labels.len() * pixels,
            "ImageSet::new: {} labels of {image_shape:?} images need {} pixels, got {}",
            labels.len(),
            labels.len() * pixels,
            images.len()
        );
        ImageSet {
            images: images.into(),
            labels: labels.into(),
            image_shape,
        }
    }

    /// The number of images.
    ///
    /// ```
    /// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
    /// assert_eq!(digits.len(), 1797);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    ///
    /// ```
    /// assert!(jaxrs::data::ImageSet::new(vec![], vec![], [2, 2]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Height and width of one image.
    ///
    /// ```
    /// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
    /// assert_eq!(digits.image_shape(), [8, 8]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn image_shape(&self) -> [usize; 2] {
        self.image_shape
    }

    /// Pixels per image (height times width).
    ///
    /// ```
    /// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
    /// assert_eq!(digits.pixels(), 64);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn pixels(&self) -> usize {
        self.image_shape[0] * self.image_shape[1]
    }

    /// All pixels, row-major `[len, pixels]`, scaled to `[0, 1]`.
    ///
    /// ```
    /// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
    /// assert!(digits.images().iter().all(|p| (0.0..=1.0).contains(p)));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn images(&self) -> &[f32] {
        &self.images
    }

    /// All labels.
    ///
    /// ```
    /// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
    /// assert!(digits.labels().iter().all(|l| (0..10).contains(l)));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn labels(&self) -> &[i32] {
        &self.labels
    }

    /// The pixels of image `i`.
    ///
    /// ```
    /// let set = jaxrs::data::ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// assert_eq!(set.image(1), &[0.5, 0.25]);
    /// ```
    pub fn image(&self, i: usize) -> &[f32] {
        let p = self.pixels();
        &self.images[i * p..(i + 1) * p]
    }

    /// The rows `rows`, in that order, as a new set.
    ///
    /// ```
    /// let set = jaxrs::data::ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// assert_eq!(set.select(&[1, 1, 0]).labels(), &[7, 7, 3]);
    /// ```
    pub fn select(&self, rows: &[usize]) -> ImageSet {
        let mut images = Vec::with_capacity(rows.len() * self.pixels());
        for &i in rows {
            images.extend_from_slice(self.image(i));
        }
        let labels = rows.iter().map(|&i| self.labels[i]).collect();
        ImageSet::new(images, labels, self.image_shape)
    }

    /// Splits into `train_n` training images and the rest held out. The held-out rows are
    /// spread evenly over the file (row `i` is held out when `floor((i + 1) h / n)` passes an
    /// integer, `h` the held-out count), so a file sorted by label, as MNIST-5k is, gives a
    /// held-out set with every class in proportion; the split needs no randomness, and every
    /// program holds out the same rows. Both keep the file's order: shuffle with
    /// [`EpochBatches::shuffled`] or [`ImageSet::epoch`].
    ///
    /// ```
    /// let mnist = jaxrs::data::read_mnist(jaxrs::data::data_dir().join(jaxrs::data::MNIST_5K))?;
    /// let (train, held_out) = mnist.split(4500);
    /// assert_eq!((train.len(), held_out.len()), (4500, 500));
    /// // 50 of each digit held out.
    /// assert_eq!(held_out.labels().iter().filter(|&&l| l == 3).count(), 50);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn split(&self, train_n: usize) -> (ImageSet, ImageSet) {
        let n = self.len();
        assert!(
            train_n <= n,
            "ImageSet::split: {train_n} training rows of {n}"
        );
        let held = n - train_n;
        let (mut train, mut rest) = (Vec::with_capacity(train_n), Vec::with_capacity(held));
        for i in 0..n {
            if (i + 1) * held / n > i * held / n {
                rest.push(i);
            } else {
                train.push(i);
            }
        }
        (self.select(&train), self.select(&rest))
    }

    /// The rows of `rows` uploaded as one [`Batch`] (padding rows get mask 0).
    ///
    /// ```
    /// use jaxrs::data::{BatchRows, ImageSet};
    ///
    /// let set = ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// let batch = set.batch(&BatchRows::sequential(2, 0, 2));
    /// assert_eq!(batch.x.to_vec::<f32>(), vec![0.0, 1.0, 0.5, 0.25]);
    /// assert_eq!(batch.y.to_vec::<i32>(), vec![3, 7]);
    /// assert_eq!(batch.mask.to_vec::<f32>(), vec![1.0, 1.0]);
    /// ```
    pub fn batch(&self, rows: &BatchRows) -> Batch {
        let (x, y) = self.gather(&rows.rows);
        Batch {
            x,
            y,
            mask: rows.mask(),
        }
    }

    /// Epoch `epoch`'s batches in the key's shuffled order ([`EpochBatches::shuffled`]),
    /// built and uploaded one step ahead on a background thread ([`prefetch`]).
    ///
    /// ```
    /// use jaxrs::data::{ImageSet, Remainder};
    ///
    /// let set = ImageSet::new((0..10).map(|p| p as f32).collect(), (0..5).collect(), [1, 2]);
    /// let key = jaxrs::random::key(0);
    /// let mut labels: Vec<i32> = set
    ///     .epoch(&key, 0, 2, Remainder::Pad)
    ///     .flat_map(|b| b.y.to_vec::<i32>().into_iter().zip(b.mask.to_vec::<f32>()))
    ///     .filter(|&(_, m)| m == 1.0)
    ///     .map(|(y, _)| y)
    ///     .collect();
    /// labels.sort_unstable();
    /// assert_eq!(labels, vec![0, 1, 2, 3, 4]);
    /// ```
    pub fn epoch(
        &self,
        key: &Array,
        epoch: u32,
        batch_size: usize,
        remainder: Remainder,
    ) -> Prefetch<Batch> {
        let rows = EpochBatches::shuffled(key, epoch, self.len(), batch_size, remainder);
        let set = self.clone();
        prefetch(rows.map(move |rows| set.batch(&rows)), 1)
    }

    /// The rows `rows` uploaded as `(x f32[rows, pixels], y i32[rows])`.
    ///
    /// ```
    /// let set = jaxrs::data::ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// let (x, y) = set.gather(&[1]);
    /// assert_eq!((x.shape(), y.to_vec::<i32>()), (&[1, 2][..], vec![7]));
    /// ```
    pub fn gather(&self, rows: &[usize]) -> (Array, Array) {
        let selected = self.select(rows);
        (
            Array::from_slice(&selected.images, &[rows.len(), self.pixels()]),
            Array::from_slice(&selected.labels, &[rows.len()]),
        )
    }

    /// The whole set uploaded as `(x f32[len, pixels], y i32[len])` (for evaluation).
    ///
    /// ```
    /// let set = jaxrs::data::ImageSet::new(vec![0.0, 1.0, 0.5, 0.25], vec![3, 7], [1, 2]);
    /// let (x, y) = set.arrays();
    /// assert_eq!((x.shape(), y.shape()), (&[2, 2][..], &[2][..]));
    /// ```
    pub fn arrays(&self) -> (Array, Array) {
        (
            Array::from_slice(&self.images, &[self.len(), self.pixels()]),
            Array::from_slice(&self.labels, &[self.len()]),
        )
    }
}

/// Reads `mnist_5k.csv.gz`: gzip CSV without header, 784 grey levels 0-255 then the label on
/// each line. Pixels are scaled to `[0, 1]` (divided by 255).
///
/// ```
/// let mnist = jaxrs::data::read_mnist(jaxrs::data::data_dir().join(jaxrs::data::MNIST_5K))?;
/// assert_eq!((mnist.len(), mnist.image_shape()), (5000, [28, 28]));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_mnist(path: impl AsRef<Path>) -> io::Result<ImageSet> {
    read_image_csv(path.as_ref(), [28, 28], 255.0)
}

/// Reads `digits.csv.gz` (UCI optical digits): gzip CSV without header, 64 grey levels 0-16
/// then the label on each line. Pixels are scaled to `[0, 1]` (divided by 16).
///
/// ```
/// let digits = jaxrs::data::read_digits(jaxrs::data::data_dir().join(jaxrs::data::DIGITS))?;
/// assert_eq!((digits.len(), digits.image_shape()), (1797, [8, 8]));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_digits(path: impl AsRef<Path>) -> io::Result<ImageSet> {
    read_image_csv(path.as_ref(), [8, 8], 16.0)
}

fn invalid(path: &Path, line: usize, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}:{line}: {what}", path.display()),
    )
}

/// The longest line the image readers accept: a line of MNIST is about 3 KB, so 1 MiB
/// bounds what a file without newlines (or a gzip bomb of one line) can make them hold.
const MAX_CSV_LINE_BYTES: usize = 1 << 20;

/// The classes of both image sets: the digits 0-9.
const DIGIT_CLASSES: i32 = 10;

fn read_image_csv(path: &Path, image_shape: [usize; 2], max_level: f32) -> io::Result<ImageSet> {
    let file = std::fs::File::open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let pixels = image_shape[0] * image_shape[1];
    let (mut images, mut labels) = (Vec::new(), Vec::new());
    // Every member of a concatenated gzip file (`cat a.gz b.gz`, as gzip itself reads it).
    let mut reader = BufReader::new(flate2::read::MultiGzDecoder::new(file));
    let mut bytes = Vec::new();
    for n in 1.. {
        bytes.clear();
        let read = (&mut reader)
            .take(MAX_CSV_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| invalid(path, n, format_args!("cannot read this line: {e}")))?;
        if read == 0 {
            break;
        }
        if bytes.len() > MAX_CSV_LINE_BYTES {
            return Err(invalid(
                path,
                n,
                format_args!("longer than {MAX_CSV_LINE_BYTES} bytes"),
            ));
        }
        let line = std::str::from_utf8(&bytes).map_err(|e| {
            invalid(
                path,
                n,
                format_args!("not UTF-8 (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let start = images.len();
        let mut fields = 0;
        for (column, field) in (1..).zip(line.trim_end_matches(['\n', '\r']).split(',')) {
            let at = |what: String| invalid(path, n, format_args!("column {column}: {what}"));
            let field = field.trim();
            if fields < pixels {
                let level: f32 = field.parse().map_err(|e| at(format!("{field:?}: {e}")))?;
                // NaN and inf are not grey levels, and would reach the loss as NaN.
                if !(0.0..=max_level).contains(&level) {
                    return Err(at(format!(
                        "pixel {field:?} is not a grey level in 0..={max_level}"
                    )));
                }
                images.push(level / max_level);
            } else if fields == pixels {
                // An integer class, not a float cast to one: `3.7`, `NaN` and `1e10` were read
                // as 3, 0 and i32::MAX.
                let label = field
                    .parse::<i32>()
                    .ok()
                    .filter(|l| (0..DIGIT_CLASSES).contains(l))
                    .ok_or_else(|| {
                        at(format!("label {field:?} is not a class 0..{DIGIT_CLASSES}"))
                    })?;
                labels.push(label);
            }
            fields += 1;
        }
        if fields != pixels + 1 {
            images.truncate(start);
            return Err(invalid(
                path,
                n,
                format_args!("{fields} fields, expected {pixels} pixels and a label"),
            ));
        }
    }
    Ok(ImageSet::new(images, labels, image_shape))
}

/// A character vocabulary: the distinct characters of a text, sorted, each encoded as its
/// index.
#[derive(Clone, Debug)]
pub struct Vocab {
    chars: Vec<char>,
    index: BTreeMap<char, i32>,
}

impl Vocab {
    /// The vocabulary of `text`'s characters.
    ///
    /// ```
    /// let vocab = jaxrs::data::Vocab::new("hello");
    /// assert_eq!(vocab.chars(), &['e', 'h', 'l', 'o']);
    /// ```
    pub fn new(text: &str) -> Vocab {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        let index = chars
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as i32))
            .collect();
        Vocab { chars, index }
    }

    /// The number of characters.
    ///
    /// ```
    /// assert_eq!(jaxrs::data::Vocab::new("hello").len(), 4);
    /// ```
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Whether the vocabulary is empty.
    ///
    /// ```
    /// assert!(jaxrs::data::Vocab::new("").is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// The characters, in token order.
    ///
    /// ```
    /// assert_eq!(jaxrs::data::Vocab::new("ba").chars(), &['a', 'b']);
    /// ```
    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// The token of one character, if it is in the vocabulary.
    ///
    /// ```
    /// let vocab = jaxrs::data::Vocab::new("hello");
    /// assert_eq!((vocab.token('l'), vocab.token('z')), (Some(2), None));
    /// ```
    pub fn token(&self, c: char) -> Option<i32> {
        self.index.get(&c).copied()
    }

    /// The tokens of `text`; panics on a character outside the vocabulary.
    ///
    /// ```
    /// let vocab = jaxrs::data::Vocab::new("hello");
    /// assert_eq!(vocab.encode("hole"), vec![1, 3, 2, 0]);
    /// ```
    #[track_caller]
    pub fn encode(&self, text: &str) -> Vec<i32> {
        text.chars()
            .map(|c| {
                self.token(c)
                    .unwrap_or_else(|| panic!("Vocab::encode: {c:?} is not in the vocabulary"))
            })
            .collect()
    }

    /// The text of `tokens`; panics on a token outside the vocabulary.
    ///
    /// ```
    /// let vocab = jaxrs::data::Vocab::new("hello");
    /// assert_eq!(vocab.decode(&vocab.encode("hello")), "hello");
    /// ```
    #[track_caller]
    pub fn decode(&self, tokens: &[i32]) -> String {
        tokens
            .iter()
            .map(|&t| {
                *usize::try_from(t)
                    .ok()
                    .and_then(|t| self.chars.get(t))
                    .unwrap_or_else(|| {
                        panic!("Vocab::decode: token {t} is not in 0..{}", self.len())
                    })
            })
            .collect()
    }
}

/// A text encoded by its character vocabulary, for language models. The last
/// [`Corpus::HELD_OUT_FRACTION`] of the tokens is held out.
#[derive(Clone)]
pub struct Corpus {
    /// The characters of the text.
    pub vocab: Vocab,
    tokens: Arc<[i32]>,
}

impl Corpus {
    /// The fraction of the text, at its end, that [`Corpus::held_out`] returns.
    pub const HELD_OUT_FRACTION: f64 = 0.1;

    /// The corpus of a text: its vocabulary and its tokens.
    ///
    /// ```
    /// let corpus = jaxrs::data::Corpus::new("abcabcabca");
    /// assert_eq!((corpus.vocab.len(), corpus.tokens().len()), (3, 10));
    /// ```
    pub fn new(text: &str) -> Corpus {
        let vocab = Vocab::new(text);
        let tokens = vocab.encode(text).into();
        Corpus { vocab, tokens }
    }

    /// All tokens.
    ///
    /// ```
    /// assert_eq!(jaxrs::data::Corpus::new("aba").tokens(), &[0, 1, 0]);
    /// ```
    pub fn tokens(&self) -> &[i32] {
        &self.tokens
    }

    /// The tokens before the held-out tail (the first 90%).
    ///
    /// ```
    /// let corpus = jaxrs::data::Corpus::new("abcabcabca");
    /// assert_eq!((corpus.train().len(), corpus.held_out()), (9, &[0][..]));
    /// ```
    pub fn train(&self) -> &[i32] {
        &self.tokens[..self.held_out_start()]
    }

    /// The held-out tail (the last 10%, rounded down).
    ///
    /// ```
    /// let corpus = jaxrs::data::Corpus::new("abcabcabca");
    /// assert_eq!(corpus.vocab.decode(corpus.held_out()), "a");
    /// ```
    pub fn held_out(&self) -> &[i32] {
        &self.tokens[self.held_out_start()..]
    }

    fn held_out_start(&self) -> usize {
        let n = self.tokens.len();
        n - (n as f64 * Self::HELD_OUT_FRACTION) as usize
    }
}

/// Reads a UTF-8 text (`tinyshakespeare.txt`) as a character [`Corpus`].
///
/// ```
/// let path = jaxrs::data::data_dir().join(jaxrs::data::TINY_SHAKESPEARE);
/// let corpus = jaxrs::data::read_text(path)?;
/// assert_eq!((corpus.vocab.len(), corpus.tokens().len()), (65, 1_115_394));
/// assert_eq!(corpus.vocab.decode(&corpus.tokens()[..14]), "First Citizen:");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_text(path: impl AsRef<Path>) -> io::Result<Corpus> {
    let path = path.as_ref();
    let bytes = std::fs::read(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        let column = 1 + valid.iter().rev().take_while(|&&b| b != b'\n').count();
        invalid(
            path,
            line,
            format_args!("not UTF-8 (byte {column} of the line)"),
        )
    })?;
    Ok(Corpus::new(&text))
}

/// Pads (or truncates) token sequences to one length: `tokens` i32[n, len] with `pad` after
/// each sequence's end, and `mask` f32[n, len], 1.0 on real tokens and 0.0 on padding
/// (`mask.astype(DType::Bool)` for a boolean one). `len` defaults to the longest sequence;
/// longer sequences keep their first `len` tokens.
///
/// ```
/// let (tokens, mask) = jaxrs::data::pad_sequences(&[vec![5, 6, 7], vec![8]], None, 0);
/// assert_eq!(tokens.shape(), &[2, 3]);
/// assert_eq!(tokens.to_vec::<i32>(), vec![5, 6, 7, 8, 0, 0]);
/// assert_eq!(mask.to_vec::<f32>(), vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
/// ```
pub fn pad_sequences<S: AsRef<[i32]>>(
    sequences: &[S],
    len: Option<usize>,
    pad: i32,
) -> (Array, Array) {
    let len = len.unwrap_or_else(|| {
        sequences
            .iter()
            .map(|s| s.as_ref().len())
            .max()
            .unwrap_or(0)
    });
    let mut tokens = vec![pad; sequences.len() * len];
    let mut mask = vec![0.0f32; sequences.len() * len];
    for (i, sequence) in sequences.iter().enumerate() {
        let sequence = sequence.as_ref();
        let kept = sequence.len().min(len);
        tokens[i * len..i * len + kept].copy_from_slice(&sequence[..kept]);
        mask[i * len..i * len + kept].fill(1.0);
    }
    let shape = [sequences.len(), len];
    (
        Array::from_vec(tokens, &shape),
        Array::from_vec(mask, &shape),
    )
}

/// The order of the examples in epoch `epoch`: `jaxrs::random::permutation(fold_in(key,
/// epoch), n)`, read back to the host. One key gives every epoch its own order, and the same
/// key and epoch always the same one (a resumed run replays it).
///
/// ```
/// let key = jaxrs::random::key(0);
/// let order = jaxrs::data::epoch_order(&key, 3, 5);
/// let mut sorted = order.clone();
/// sorted.sort_unstable();
/// assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
/// assert_eq!(order, jaxrs::data::epoch_order(&key, 3, 5));
/// ```
pub fn epoch_order(key: &Array, epoch: u32, n: usize) -> Vec<usize> {
    let permutation = crate::random::permutation(&crate::random::fold_in(key, epoch), n);
    permutation
        .to_vec::<i32>()
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

/// Random windows of a token sequence for training a language model: `batch` windows of `len`
/// tokens starting at `randint(key, [batch], 0, tokens.len() - len)`, as `(inputs, targets)`,
/// both i32[batch, len], the targets the inputs shifted one token on.
///
/// ```
/// let tokens: Vec<i32> = (0..100).collect();
/// let (inputs, targets) = jaxrs::data::random_windows(&tokens, &jaxrs::random::key(1), 4, 8);
/// assert_eq!((inputs.shape(), targets.shape()), (&[4, 8][..], &[4, 8][..]));
/// let (x, y) = (inputs.to_vec::<i32>(), targets.to_vec::<i32>());
/// assert!(x.iter().zip(&y).all(|(a, b)| b - a == 1));
/// ```
#[track_caller]
pub fn random_windows(tokens: &[i32], key: &Array, batch: usize, len: usize) -> (Array, Array) {
    assert!(
        tokens.len() > len,
        "random_windows: windows of {len} tokens and their targets need more than {} tokens",
        tokens.len()
    );
    let starts = crate::random::randint(
        key,
        &[batch],
        0,
        (tokens.len() - len) as i64,
        crate::DType::I32,
    )
    .to_vec::<i32>();
    let (mut inputs, mut targets) = (
        Vec::with_capacity(batch * len),
        Vec::with_capacity(batch * len),
    );
    for start in starts {
        let start = start as usize;
        inputs.extend_from_slice(&tokens[start..start + len]);
        targets.extend_from_slice(&tokens[start + 1..start + len + 1]);
    }
    (
        Array::from_vec(inputs, &[batch, len]),
        Array::from_vec(targets, &[batch, len]),
    )
}

/// What to do with the examples left over when the batch size does not divide their number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remainder {
    /// Leave them out of this epoch (a different few each epoch when shuffled): every batch
    /// is full and has one shape, so a jitted step compiles once.
    Drop,
    /// Give them a last batch of the same shape, filled up with rows from the start of the
    /// epoch's order whose mask is 0, so every example counts once and the shape stays fixed.
    Pad,
}

/// The row indices of one batch: always `batch_size` rows, the first `valid` real and the rest
/// padding (see [`Remainder::Pad`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRows {
    /// Row indices into the data set.
    pub rows: Vec<usize>,
    /// How many of `rows`, from the start, are real examples.
    pub valid: usize,
}

impl BatchRows {
    /// Rows `start..start + batch_size` of `0..n` in order (clipped to `n`): for evaluation.
    ///
    /// ```
    /// let rows = jaxrs::data::BatchRows::sequential(10, 8, 4);
    /// assert_eq!((rows.rows, rows.valid), (vec![8, 9], 2));
    /// ```
    pub fn sequential(n: usize, start: usize, batch_size: usize) -> BatchRows {
        let rows: Vec<usize> = (start.min(n)..(start + batch_size).min(n)).collect();
        BatchRows {
            valid: rows.len(),
            rows,
        }
    }

    /// The mask of the batch, `f32[batch]`: 1.0 on the real rows, 0.0 on padding.
    ///
    /// ```
    /// let rows = jaxrs::data::BatchRows { rows: vec![4, 2, 0], valid: 2 };
    /// assert_eq!(rows.mask().to_vec::<f32>(), vec![1.0, 1.0, 0.0]);
    /// ```
    pub fn mask(&self) -> Array {
        let mask: Vec<f32> = (0..self.rows.len())
            .map(|i| if i < self.valid { 1.0 } else { 0.0 })
            .collect();
        Array::from_vec(mask, &[self.rows.len()])
    }
}

/// The batches of one epoch over an order of the examples: an iterator of [`BatchRows`].
#[derive(Clone, Debug)]
pub struct EpochBatches {
    order: Vec<usize>,
    batch_size: usize,
    remainder: Remainder,
    next: usize,
}

impl EpochBatches {
    /// The batches of `batch_size` rows over `order` (a permutation of the examples' indices).
    ///
    /// ```
    /// use jaxrs::data::{EpochBatches, Remainder};
    ///
    /// let drop: Vec<_> = EpochBatches::new(vec![4, 3, 2, 1, 0], 2, Remainder::Drop).map(|b| b.rows).collect();
    /// assert_eq!(drop, vec![vec![4, 3], vec![2, 1]]);
    /// let pad: Vec<_> = EpochBatches::new(vec![4, 3, 2, 1, 0], 2, Remainder::Pad).collect();
    /// assert_eq!((pad.len(), &pad[2].rows, pad[2].valid), (3, &vec![0, 4], 1));
    /// ```
    #[track_caller]
    pub fn new(order: Vec<usize>, batch_size: usize, remainder: Remainder) -> EpochBatches {
        assert!(batch_size > 0, "EpochBatches: batch size 0");
        EpochBatches {
            order,
            batch_size,
            remainder,
            next: 0,
        }
    }

    /// The batches of epoch `epoch` in the key's shuffled order ([`epoch_order`]).
    ///
    /// ```
    /// use jaxrs::data::{EpochBatches, Remainder};
    ///
    /// let key = jaxrs::random::key(42);
    /// let batches = EpochBatches::shuffled(&key, 0, 10, 4, Remainder::Pad);
    /// assert_eq!(batches.len(), 3);
    /// ```
    pub fn shuffled(
        key: &Array,
        epoch: u32,
        n: usize,
        batch_size: usize,
        remainder: Remainder,
    ) -> EpochBatches {
        EpochBatches::new(epoch_order(key, epoch, n), batch_size, remainder)
    }

    /// The number of batches the epoch yields in all.
    ///
    /// ```
    /// use jaxrs::data::{EpochBatches, Remainder};
    /// assert_eq!(EpochBatches::new((0..10).collect(), 4, Remainder::Drop).batch_count(), 2);
    /// assert_eq!(EpochBatches::new((0..10).collect(), 4, Remainder::Pad).batch_count(), 3);
    /// ```
    pub fn batch_count(&self) -> usize {
        match self.remainder {
            Remainder::Drop => self.order.len() / self.batch_size,
            Remainder::Pad => self.order.len().div_ceil(self.batch_size),
        }
    }

    /// The epoch's order of the examples.
    ///
    /// ```
    /// use jaxrs::data::{EpochBatches, Remainder};
    /// assert_eq!(EpochBatches::new(vec![1, 0], 1, Remainder::Drop).order(), &[1, 0]);
    /// ```
    pub fn order(&self) -> &[usize] {
        &self.order
    }
}

impl Iterator for EpochBatches {
    type Item = BatchRows;

    fn next(&mut self) -> Option<BatchRows> {
        let n = self.order.len();
        let start = self.next;
        let full = start + self.batch_size <= n;
        if start >= n || (!full && self.remainder == Remainder::Drop) {
            return None;
        }
        self.next += self.batch_size;
        let end = (start + self.batch_size).min(n);
        let mut rows = self.order[start..end].to_vec();
        let valid = rows.len();
        rows.extend(
            self.order
                .iter()
                .cycle()
                .take(self.batch_size - valid)
                .copied(),
        );
        Some(BatchRows { rows, valid })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.batch_count() - (self.next / self.batch_size).min(self.batch_count());
        (left, Some(left))
    }
}

impl ExactSizeIterator for EpochBatches {}

/// Runs `batches` on a background thread, one step ahead: while the caller works on batch
/// `k` (a training step dispatched to the device), the thread builds and uploads batch `k + 1`.
/// The batches come out in order, equal to `batches`' own.
///
/// [`Array`] is `Send` (its device buffers are reference-counted PJRT handles, and PJRT
/// uploads from any thread), so the iterator can make the device arrays itself, usually with
/// [`ImageSet::batch`]; make it own what it reads (an [`ImageSet`] clone is cheap). `depth`
/// batches at most wait ready (1 is the usual double buffering). Dropping the `Prefetch`
/// early stops the thread after the batch it is building.
///
/// ```
/// use jaxrs::data::{prefetch, BatchRows, EpochBatches, ImageSet, Remainder};
///
/// let set = ImageSet::new((0..12).map(|p| p as f32).collect(), (0..6).collect(), [1, 2]);
/// let rows = EpochBatches::new(vec![5, 4, 3, 2, 1, 0], 2, Remainder::Drop);
/// let loader = set.clone();
/// let labels: Vec<Vec<i32>> = prefetch(rows.map(move |r| loader.batch(&r)), 1)
///     .map(|b| b.y.to_vec::<i32>())
///     .collect();
/// assert_eq!(labels, vec![vec![5, 4], vec![3, 2], vec![1, 0]]);
/// ```
pub fn prefetch<I>(batches: I, depth: usize) -> Prefetch<I::Item>
where
    I: Iterator + Send + 'static,
    I::Item: Send + 'static,
{
    let (sender, receiver) = sync_channel(depth.max(1) - 1);
    let worker = std::thread::Builder::new()
        .name("jaxrs-prefetch".into())
        .spawn(move || {
            for batch in batches {
                // The receiver is gone: the consumer stopped early.
                if sender.send(batch).is_err() {
                    break;
                }
            }
        })
        .expect("prefetch: cannot spawn its thread");
    Prefetch {
        receiver: Some(receiver),
        worker: Some(worker),
    }
}

/// The iterator [`prefetch`] returns.
pub struct Prefetch<T> {
    receiver: Option<Receiver<T>>,
    worker: Option<JoinHandle<()>>,
}

impl<T> Iterator for Prefetch<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let item = self.receiver.as_ref()?.recv().ok();
        if item.is_none() {
            self.join();
        }
        item
    }
}

impl<T> Prefetch<T> {
    fn join(&mut self) {
        self.receiver = None;
        if let Some(worker) = self.worker.take() {
            if let Err(panic) = worker.join() {
                // A panic while building a batch is the caller's error: re-raise it here.
                std::panic::resume_unwind(panic);
            }
        }
    }
}

impl<T> Drop for Prefetch<T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        self.join();
    }
}
