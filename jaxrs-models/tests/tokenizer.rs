//! The tokenizer against Hugging Face's: the goldens of `tests/golden/gen_hf.py`
//! (`hf/tokenizer_expected.json`: texts -> ids -> text by Python's `tokenizers`), streaming
//! decode, the special tokens of model folders, and hostile files.

use std::fs;
use std::path::{Path, PathBuf};

use jaxrs_models::tokenizer::{Tokenizer, MAX_FILE_BYTES};
use jaxrs_models::Error;
use serde_json::Value;

fn golden(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/hf")
        .join(rel)
}

fn tokenizer() -> Tokenizer {
    Tokenizer::from_dir(golden("tokenizer")).expect("the golden tokenizer loads")
}

struct Case {
    text: String,
    ids: Vec<u32>,
    ids_no_special: Vec<u32>,
    tokens: Vec<String>,
    decoded: String,
    decoded_skip_special: String,
}

fn expected() -> (Value, Vec<Case>) {
    let doc: Value =
        serde_json::from_str(&fs::read_to_string(golden("tokenizer_expected.json")).unwrap())
            .unwrap();
    let ids = |v: &Value| -> Vec<u32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    let cases = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            text: c["text"].as_str().unwrap().to_string(),
            ids: ids(&c["ids"]),
            ids_no_special: ids(&c["ids_no_special"]),
            tokens: c["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect(),
            decoded: c["decoded"].as_str().unwrap().to_string(),
            decoded_skip_special: c["decoded_skip_special"].as_str().unwrap().to_string(),
        })
        .collect();
    (doc, cases)
}

/// A scratch folder of this test binary, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "jaxrs-models-tokenizer-{}-{name}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn encodes_every_golden_text_to_huggingfaces_ids() {
    let tok = tokenizer();
    let (doc, cases) = expected();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for c in &cases {
        assert_eq!(tok.encode(&c.text, true).unwrap(), c.ids, "{:?}", c.text);
        assert_eq!(
            tok.encode(&c.text, false).unwrap(),
            c.ids_no_special,
            "{:?} without special tokens",
            c.text
        );
        let tokens: Vec<String> = c
            .ids
            .iter()
            .map(|&id| tok.id_to_token(id).unwrap())
            .collect();
        assert_eq!(tokens, c.tokens, "{:?}", c.text);
    }
    // The cases cover what they claim to: multi-byte text split over several tokens, the
    // special token inside a text, and the empty string.
    let by_text = |t: &str| cases.iter().find(|c| c.text == t).unwrap();
    assert!(by_text("café — naïve 日本語 🙂").ids.len() > "café naïve".len());
    assert!(by_text("Hello<|endoftext|>world").ids.contains(&0));
    assert!(by_text("").ids.is_empty());
    assert_eq!(doc["vocab_size"].as_u64(), Some(tok.vocab_size() as u64));
}

#[test]
fn decodes_every_golden_to_huggingfaces_text() {
    let tok = tokenizer();
    for c in &expected().1 {
        assert_eq!(
            tok.decode(&c.ids, false).unwrap(),
            c.decoded,
            "{:?}",
            c.text
        );
        assert_eq!(
            tok.decode(&c.ids, true).unwrap(),
            c.decoded_skip_special,
            "{:?}",
            c.text
        );
    }
    // Byte-level BPE round-trips any text.
    let c = expected().1;
    assert!(c.iter().all(|c| c.decoded == c.text));
}

#[test]
fn special_tokens_and_vocabulary() {
    let tok = tokenizer();
    let (doc, _) = expected();
    assert_eq!(tok.vocab_size(), 1024);
    assert_eq!(tok.token_to_id("<|endoftext|>"), Some(0));
    assert_eq!(tok.id_to_token(0).as_deref(), Some("<|endoftext|>"));
    assert_eq!(tok.token_to_id("no such token"), None);
    assert_eq!(tok.id_to_token(1024), None);
    let eos = doc["eos_token_id"].as_u64().unwrap() as u32;
    assert_eq!(tok.eos_token_id(), Some(eos));
    assert_eq!(
        tok.bos_token_id(),
        Some(doc["bos_token_id"].as_u64().unwrap() as u32)
    );
    assert_eq!(tok.stop_token_ids(), &[eos]);
    // Out-of-vocabulary ids are skipped, as transformers skips them.
    let hi = tok.encode("hi", false).unwrap();
    let mut with_oov = hi.clone();
    with_oov.push(5000);
    assert_eq!(tok.decode(&with_oov, false).unwrap(), "hi");
}

#[test]
fn a_lone_tokenizer_json_names_no_eos() {
    let tok = Tokenizer::from_file(golden("tokenizer/tokenizer.json")).unwrap();
    assert_eq!(tok.eos_token_id(), None);
    assert_eq!(tok.bos_token_id(), None);
    assert!(tok.stop_token_ids().is_empty());
    assert_eq!(
        tok.encode("ROMEO:", false).unwrap(),
        tokenizer().encode("ROMEO:", false).unwrap()
    );
}

#[test]
fn eos_from_generation_config_and_config() {
    let tok_json = fs::read(golden("tokenizer/tokenizer.json")).unwrap();
    // No tokenizer_config.json: the ids of generation_config.json (a list, as Llama 3's),
    // which also win over config.json's.
    let dir = scratch("eos-generation");
    fs::write(dir.join("tokenizer.json"), &tok_json).unwrap();
    fs::write(
        dir.join("generation_config.json"),
        r#"{"eos_token_id": [7, 9, 7], "bos_token_id": 3}"#,
    )
    .unwrap();
    fs::write(
        dir.join("config.json"),
        r#"{"eos_token_id": 5, "bos_token_id": 4}"#,
    )
    .unwrap();
    let tok = Tokenizer::from_dir(&dir).unwrap();
    assert_eq!(tok.eos_token_id(), Some(7));
    assert_eq!(tok.bos_token_id(), Some(3));
    assert_eq!(tok.stop_token_ids(), &[7, 9]);

    // tokenizer_config.json's eos token (here in the older {"content": ..} form) names the
    // tokenizer's eos; generate still stops at generation_config.json's ids.
    fs::write(
        dir.join("tokenizer_config.json"),
        r#"{"eos_token": {"content": "<|endoftext|>", "special": true}, "bos_token": null}"#,
    )
    .unwrap();
    let tok = Tokenizer::from_dir(&dir).unwrap();
    assert_eq!(tok.eos_token_id(), Some(0));
    assert_eq!(tok.bos_token_id(), Some(3));
    assert_eq!(tok.stop_token_ids(), &[7, 9]);

    // Only config.json.
    fs::remove_file(dir.join("generation_config.json")).unwrap();
    fs::remove_file(dir.join("tokenizer_config.json")).unwrap();
    let tok = Tokenizer::from_dir(&dir).unwrap();
    assert_eq!((tok.eos_token_id(), tok.bos_token_id()), (Some(5), Some(4)));
    assert_eq!(tok.stop_token_ids(), &[5]);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_golden_model_folder_names_its_eos() {
    // The model folders the generator saves have generation_config.json and config.json.
    let dir = scratch("model-folder");
    fs::copy(
        golden("tokenizer/tokenizer.json"),
        dir.join("tokenizer.json"),
    )
    .unwrap();
    fs::copy(
        golden("llama/generation_config.json"),
        dir.join("generation_config.json"),
    )
    .unwrap();
    fs::copy(golden("llama/config.json"), dir.join("config.json")).unwrap();
    let tok = Tokenizer::from_dir(&dir).unwrap();
    assert_eq!(tok.eos_token_id(), Some(0));
    assert_eq!(tok.stop_token_ids(), &[0]);
    fs::remove_dir_all(&dir).unwrap();
}

/// Feeds ids one by one; returns the pieces, the final flush included.
fn stream_pieces(tok: &Tokenizer, ids: &[u32], skip: bool) -> Vec<String> {
    let mut stream = tok.decode_stream(skip);
    let mut pieces = Vec::new();
    for &id in ids {
        if let Some(p) = stream.step(id).unwrap() {
            assert!(!p.is_empty());
            assert!(
                !p.contains('\u{FFFD}'),
                "a piece with a broken character: {p:?}"
            );
            pieces.push(p);
        }
    }
    let rest = stream.finish().unwrap();
    assert_eq!(stream.pending(), 0);
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

#[test]
fn streaming_pieces_concatenate_to_the_full_decode() {
    let tok = tokenizer();
    for c in &expected().1 {
        for skip in [false, true] {
            let pieces = stream_pieces(&tok, &c.ids, skip);
            let want = if skip {
                &c.decoded_skip_special
            } else {
                &c.decoded
            };
            assert_eq!(
                &pieces.concat(),
                want,
                "{:?} (skip special: {skip})",
                c.text
            );
        }
    }
    // The crate's own DecodeStream gives the same pieces on text that ends on a character.
    for c in &expected().1 {
        let mut theirs = tok.inner().decode_stream(false);
        let theirs: Vec<String> = c
            .ids
            .iter()
            .filter_map(|&id| theirs.step(id).unwrap())
            .collect();
        assert_eq!(stream_pieces(&tok, &c.ids, false), theirs, "{:?}", c.text);
    }
}

#[test]
fn streaming_holds_a_character_until_its_last_byte() {
    let tok = tokenizer();
    // Each of these characters is several bytes, and the 1024-token BPE has learnt none of
    // them: it takes several tokens, and no piece may split it.
    for ch in ["🙂", "日", "—", "👨‍👩‍👧"] {
        let ids = tok.encode(ch, false).unwrap();
        assert!(ids.len() > 1, "{ch:?} is {ids:?}");
        let mut stream = tok.decode_stream(false);
        let mut text = String::new();
        for &id in &ids[..ids.len() - 1] {
            if let Some(p) = stream.step(id).unwrap() {
                // Whole characters before the last token (the ZWJ sequence's parts).
                text.push_str(&p);
                assert!(
                    ch.starts_with(&text) && !p.contains('\u{FFFD}'),
                    "{ch:?}: {p:?}"
                );
            }
        }
        assert!(
            text.len() < ch.len(),
            "{ch:?} came out before its last token"
        );
        text.push_str(&stream.step(*ids.last().unwrap()).unwrap().unwrap());
        assert_eq!(text, ch);
        assert_eq!(stream.pending(), 0);
    }
    let text = "café — naïve 日本語 🙂";
    let ids = tok.encode(text, false).unwrap();
    let pieces = stream_pieces(&tok, &ids, false);
    assert_eq!(pieces.concat(), text);
    assert!(pieces.len() > 5 && pieces.len() < ids.len(), "{pieces:?}");
}

#[test]
fn streaming_flushes_an_unfinished_character_as_decode_does() {
    let tok = tokenizer();
    // Generation may stop inside a character: the stream holds its bytes back, and finish()
    // gives them as decode() does (U+FFFD), so the pieces still add up to the full decode.
    let ids = tok.encode("ok 🙂", false).unwrap();
    let cut = &ids[..ids.len() - 1];
    let mut stream = tok.decode_stream(false);
    let mut text = String::new();
    for &id in cut {
        text.extend(stream.step(id).unwrap());
    }
    assert!(stream.pending() > 0);
    assert_eq!(text, "ok ");
    text.push_str(&stream.finish().unwrap());
    assert_eq!(text, tok.decode(cut, false).unwrap());
    assert!(text.ends_with('\u{FFFD}'));
    // A finished stream starts afresh.
    assert_eq!(stream.finish().unwrap(), "");
    let again = tok.encode("again", false).unwrap();
    assert_eq!(stream_pieces(&tok, &again, false).concat(), "again");
}

// --- hostile files --------------------------------------------------------------------------

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let path = golden("tokenizer/no-such-tokenizer.json");
    match Tokenizer::from_file(&path) {
        Err(Error::Io { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    let dir = scratch("empty-dir");
    let err = Tokenizer::from_dir(&dir).unwrap_err();
    assert!(
        matches!(&err, Error::Io { path, .. } if path.ends_with("tokenizer.json")),
        "{err}"
    );
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_tokenizer_json_is_a_format_error() {
    let bytes = fs::read(golden("tokenizer/tokenizer.json")).unwrap();
    let dir = scratch("truncated");
    for cut in [0, 1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 2] {
        let path = dir.join("tokenizer.json");
        fs::write(&path, &bytes[..cut]).unwrap();
        match Tokenizer::from_file(&path) {
            Err(Error::Format { path: p, message }) => {
                assert_eq!(p, path);
                assert!(message.contains("malformed JSON"), "{message}");
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_or_wrong_json_is_a_typed_error() {
    let dir = scratch("malformed");
    let path = dir.join("tokenizer.json");
    for (bytes, malformed) in [
        (&b"{\"model\": {\"type\": \"BPE\",, }"[..], true),
        (&b"\xff\xfe not utf-8"[..], true),
        (&b"[1, 2, 3]"[..], false),
        (&b"{\"model\": {\"type\": \"NoSuchModel\"}}"[..], false),
        (&b"{\"version\": \"1.0\", \"model\": 42}"[..], false),
    ] {
        fs::write(&path, bytes).unwrap();
        let err = Tokenizer::from_file(&path).unwrap_err();
        match &err {
            Error::Format { path: p, .. } if malformed => assert_eq!(p, &path),
            Error::Tokenizer(message) if !malformed => {
                assert!(message.contains("tokenizer.json"), "{message}")
            }
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(bytes)),
        }
    }
    // A BPE whose merges name tokens that are not in its vocabulary.
    let mut doc: Value =
        serde_json::from_slice(&fs::read(golden("tokenizer/tokenizer.json")).unwrap()).unwrap();
    doc["model"]["merges"] = serde_json::json!([["nope", "nada"]]);
    fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(matches!(
        Tokenizer::from_file(&path),
        Err(Error::Tokenizer(_))
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_side_files_are_errors_naming_them() {
    let tok_json = fs::read(golden("tokenizer/tokenizer.json")).unwrap();
    let dir = scratch("side-files");
    fs::write(dir.join("tokenizer.json"), &tok_json).unwrap();
    let cases: [(&str, &str, &str); 6] = [
        (
            "tokenizer_config.json",
            "{\"eos_token\": ",
            "malformed JSON",
        ),
        (
            "tokenizer_config.json",
            r#"{"eos_token": "<|nope|>"}"#,
            "not in the tokenizer's vocabulary",
        ),
        (
            "tokenizer_config.json",
            r#"{"eos_token": 3}"#,
            "not a token",
        ),
        (
            "generation_config.json",
            r#"{"eos_token_id": 99999}"#,
            "not a token id",
        ),
        (
            "generation_config.json",
            r#"{"eos_token_id": [1, -2]}"#,
            "not a token id",
        ),
        (
            "config.json",
            r#"{"eos_token_id": "two"}"#,
            "not a token id",
        ),
    ];
    for (file, text, says) in cases {
        for f in [
            "tokenizer_config.json",
            "generation_config.json",
            "config.json",
        ] {
            let _ = fs::remove_file(dir.join(f));
        }
        fs::write(dir.join(file), text).unwrap();
        match Tokenizer::from_dir(&dir) {
            Err(Error::Format { path, message }) => {
                assert_eq!(path, dir.join(file));
                assert!(message.contains(says), "{file} {text}: {message}");
            }
            other => panic!("{file} {text}: {other:?}"),
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_over_the_bound_is_refused_before_it_is_read() {
    let dir = scratch("too-large");
    let path = dir.join("tokenizer.json");
    // A sparse file: its size is over the bound without writing 64 MiB.
    let f = fs::File::create(&path).unwrap();
    f.set_len(MAX_FILE_BYTES + 1).unwrap();
    drop(f);
    match Tokenizer::from_file(&path) {
        Err(Error::TooLarge {
            path: p,
            size,
            limit,
        }) => {
            assert_eq!(p, path);
            assert_eq!(size, MAX_FILE_BYTES + 1);
            assert_eq!(limit, MAX_FILE_BYTES);
        }
        other => panic!("{other:?}"),
    }
    // So is an oversized side file of a model folder.
    fs::remove_file(&path).unwrap();
    fs::copy(golden("tokenizer/tokenizer.json"), &path).unwrap();
    let f = fs::File::create(dir.join("config.json")).unwrap();
    f.set_len(MAX_FILE_BYTES + 10).unwrap();
    drop(f);
    assert!(matches!(
        Tokenizer::from_dir(&dir),
        Err(Error::TooLarge { .. })
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_device_reporting_no_size_is_bounded_while_read() {
    // /dev/zero reports a size of 0 and never ends: the read stops at the bound.
    match Tokenizer::from_file("/dev/zero") {
        Err(Error::TooLarge { size, limit, .. }) => {
            assert_eq!(limit, MAX_FILE_BYTES);
            assert!(size > MAX_FILE_BYTES);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_directory_given_as_a_file_is_an_io_error() {
    let err = Tokenizer::from_file(golden("tokenizer")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
}

#[test]
fn shared_across_threads() {
    let tok = tokenizer();
    let (_, cases) = expected();
    std::thread::scope(|s| {
        for chunk in cases.chunks(8) {
            let tok = tok.clone();
            s.spawn(move || {
                for c in chunk {
                    assert_eq!(tok.encode(&c.text, true).unwrap(), c.ids);
                }
            });
        }
    });
}

#[test]
fn the_demo_models_tokenizer_is_the_golden_one_and_decodes_its_sample() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/shakespeare-gpt2");
    assert_eq!(
        fs::read(demo.join("tokenizer.json")).unwrap(),
        fs::read(golden("tokenizer/tokenizer.json")).unwrap()
    );
    let tok = Tokenizer::from_dir(&demo).unwrap();
    assert_eq!(tok.eos_token_id(), Some(0));
    assert_eq!(tok.stop_token_ids(), &[0]);
    let exp: Value =
        serde_json::from_str(&fs::read_to_string(demo.join("expected.json")).unwrap()).unwrap();
    let ids = |v: &Value| -> Vec<u32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    assert_eq!(exp["prompt"], "ROMEO:");
    assert_eq!(tok.encode("ROMEO:", true).unwrap(), ids(&exp["prompt_ids"]));
    let sample = ids(&exp["greedy_tokens"]);
    assert_eq!(sample.len(), 64);
    assert_eq!(
        tok.decode(&sample, false).unwrap(),
        exp["greedy_decoded"].as_str().unwrap()
    );
    assert_eq!(
        stream_pieces(&tok, &sample, false).concat(),
        exp["greedy_decoded"].as_str().unwrap()
    );
}
