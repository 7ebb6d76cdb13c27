//! The data readers against files they must refuse: labels that are not classes, pixels that
//! are not grey levels, concatenated gzip members, corrupt gzip and bad UTF-8 (each error
//! names the file, the line and, for a field, the column), and random, truncated and
//! bit-flipped bytes (an error, never a panic).

use flate2::write::GzEncoder;
use flate2::Compression;
use jaxrs::data;
use proptest::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(text).unwrap();
    encoder.finish().unwrap()
}

/// A fresh file holding `bytes`, named for the test (distinct per call).
fn file_with(bytes: &[u8]) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("jaxrs-data-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "case-{}.csv.gz",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// A UCI digits line: 64 grey levels then `label`.
fn digits_line(level: &str, label: &str) -> String {
    let mut fields = vec![level; 64];
    fields.push(label);
    fields.join(",") + "\n"
}

/// The error reading `text` (gzipped) as digits, with the file's path removed.
fn digits_error(text: &str) -> String {
    let path = file_with(&gzip(text.as_bytes()));
    let err = data::read_digits(&path)
        .err()
        .expect("the file must be refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let message = err.to_string();
    let shown = path.display().to_string();
    assert!(
        message.starts_with(&shown),
        "the error names the file: {message}"
    );
    message[shown.len()..].to_string()
}

#[test]
fn labels_must_be_integer_classes() {
    let good = digits_line("3", "7");
    for label in ["10", "-1", "NaN", "3.7", "1e10", "seven", ""] {
        let message = digits_error(&format!("{good}{}", digits_line("3", label)));
        assert_eq!(
            message,
            format!(":2: column 65: label {label:?} is not a class 0..10"),
            "label {label:?}"
        );
    }
    let path = file_with(&gzip(
        format!("{good}{}", digits_line("16", "0")).as_bytes(),
    ));
    let set = data::read_digits(&path).unwrap();
    assert_eq!(set.labels(), &[7, 0]);
    assert_eq!(set.image(1)[0], 1.0);
}

#[test]
fn pixels_must_be_finite_grey_levels() {
    for level in ["NaN", "inf", "-inf", "17", "-1"] {
        let mut fields = vec!["0"; 64];
        fields[5] = level;
        let line = fields.join(",") + ",3\n";
        assert_eq!(
            digits_error(&line),
            format!(":1: column 6: pixel {level:?} is not a grey level in 0..=16"),
        );
    }
}

#[test]
fn every_member_of_a_concatenated_gzip_file_is_read() {
    let mut bytes = gzip(digits_line("1", "1").as_bytes());
    bytes.extend(gzip(
        format!("{}{}", digits_line("2", "2"), digits_line("4", "4")).as_bytes(),
    ));
    let set = data::read_digits(file_with(&bytes)).unwrap();
    assert_eq!(
        set.labels(),
        &[1, 2, 4],
        "the members after the first were dropped"
    );
    assert_eq!(set.image(2)[0], 0.25);
}

#[test]
fn a_corrupt_gzip_stream_names_the_file_and_the_line() {
    let text: String = (0..50)
        .map(|i| digits_line(&(i % 17).to_string(), "5"))
        .collect();
    let mut bytes = gzip(text.as_bytes());
    // The CRC at the end no longer matches: the stream reads through, then fails its check.
    let n = bytes.len();
    bytes[n - 8] ^= 0xff;
    let path = file_with(&bytes);
    let message = data::read_digits(&path).err().unwrap().to_string();
    assert!(
        message.starts_with(&format!("{}:", path.display())),
        "{message}"
    );
    assert!(message.contains("cannot read this line"), "{message}");
}

#[test]
fn bad_utf8_names_the_file_and_the_line() {
    let mut text = digits_line("1", "1").into_bytes();
    text.extend(b"\xff\xfe,");
    text.extend(digits_line("1", "1").as_bytes());
    let path = file_with(&gzip(&text));
    let message = data::read_digits(&path).err().unwrap().to_string();
    assert_eq!(
        message,
        format!("{}:2: not UTF-8 (byte 1 of the line)", path.display())
    );

    let corpus = file_with(b"First line\nsecond \xc3\x28 line\n");
    let message = data::read_text(&corpus).err().unwrap().to_string();
    assert_eq!(
        message,
        format!("{}:2: not UTF-8 (byte 8 of the line)", corpus.display())
    );
}

#[test]
fn a_line_without_end_is_bounded() {
    // 2 MiB of zeros without a newline (a few KB gzipped): refused at the bound, not held.
    let text = "0,".repeat(1 << 20);
    let message = digits_error(&text);
    assert_eq!(message, ":1: longer than 1048576 bytes");
}

/// Reads `bytes` as a digits file (written to a temp file, removed after).
fn read_digits_bytes(bytes: &[u8]) -> std::io::Result<data::ImageSet> {
    let path = file_with(bytes);
    let read = data::read_digits(&path);
    std::fs::remove_file(&path).unwrap();
    read
}

/// A valid digits file of three lines, gzipped.
fn sample() -> Vec<u8> {
    gzip(
        format!(
            "{}{}{}",
            digits_line("0", "1"),
            digits_line("16", "9"),
            digits_line("8", "0")
        )
        .as_bytes(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_bytes_are_an_error_or_a_set(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_digits_bytes(&bytes);
        let _ = read_digits_bytes(&gzip(&bytes));
    }

    #[test]
    fn truncated_files_are_refused(cut in 1usize..1000) {
        let bytes = sample();
        let cut = 1 + cut % (bytes.len() - 1);
        prop_assert!(read_digits_bytes(&bytes[..cut]).is_err());
    }

    #[test]
    fn bit_flipped_files_read_or_are_refused(flips in proptest::collection::vec((any::<usize>(), 0u8..8), 1..4)) {
        let mut bytes = sample();
        let len = bytes.len();
        for (at, bit) in flips {
            bytes[at % len] ^= 1 << bit;
        }
        if let Ok(set) = read_digits_bytes(&bytes) {
            // Whatever decodes is still made of grey levels and classes.
            prop_assert!(set.images().iter().all(|p| (0.0..=1.0).contains(p)));
            prop_assert!(set.labels().iter().all(|l| (0..10).contains(l)));
        }
    }
}
