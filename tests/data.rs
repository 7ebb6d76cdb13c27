//! `jaxrs::data`: the readers against the files in `../shared/data` (shapes and a few values
//! checked by hand with `zcat | head`), the batch iterator (every example once per epoch, one
//! shape), padding masks, and the prefetch (same batches, same order).

use jaxrs::data::{self, BatchRows, EpochBatches, ImageSet, Remainder};
use jaxrs::prelude::*;

fn mnist() -> ImageSet {
    data::read_mnist(data::data_dir().join(data::MNIST_5K)).expect("mnist_5k.csv.gz")
}

#[test]
fn mnist_reader_shapes_and_values() {
    let mnist = mnist();
    assert_eq!(
        (mnist.len(), mnist.image_shape(), mnist.pixels()),
        (5000, [28, 28], 784)
    );
    assert_eq!(mnist.images().len(), 5000 * 784);
    // First row: pixels 127..=131 are 51, 159, 253, 159, 50; the file is sorted by label.
    let first = mnist.image(0);
    assert_eq!(first[126], 0.0);
    for (i, level) in [
        (127, 51.0),
        (128, 159.0),
        (129, 253.0),
        (130, 159.0),
        (131, 50.0),
    ] {
        assert_eq!(first[i], level / 255.0, "pixel {i}");
    }
    assert_eq!(mnist.labels()[0], 0);
    assert_eq!(mnist.labels()[4999], 9);
    for digit in 0..10 {
        assert_eq!(mnist.labels().iter().filter(|&&l| l == digit).count(), 500);
    }
    assert!(mnist.images().iter().all(|p| (0.0..=1.0).contains(p)));
    assert!(mnist.images().contains(&1.0));
}

#[test]
fn digits_reader_shapes_and_values() {
    let digits = data::read_digits(data::data_dir().join(data::DIGITS)).unwrap();
    assert_eq!((digits.len(), digits.image_shape()), (1797, [8, 8]));
    let first: Vec<f32> = [0, 0, 5, 13, 9, 1, 0, 0]
        .iter()
        .map(|&v| v as f32 / 16.0)
        .collect();
    assert_eq!(&digits.image(0)[..8], &first[..]);
    assert_eq!(digits.labels()[0], 0);
    assert_eq!(digits.image(1796)[2], 10.0 / 16.0);
    assert_eq!(digits.labels()[1796], 8);
    let (x, y) = digits.arrays();
    assert_eq!((x.shape(), x.dtype()), (&[1797, 64][..], DType::F32));
    assert_eq!((y.shape(), y.dtype()), (&[1797][..], DType::I32));
}

#[test]
fn a_missing_or_malformed_file_is_an_error() {
    let missing = data::read_mnist("../shared/data/no_such_file.csv.gz")
        .err()
        .unwrap();
    assert!(missing.to_string().contains("no_such_file"), "{missing}");
    // digits.csv.gz has 65 fields a line, not 785.
    let wrong = data::read_mnist(data::data_dir().join(data::DIGITS))
        .err()
        .unwrap();
    assert_eq!(wrong.kind(), std::io::ErrorKind::InvalidData);
    assert!(wrong.to_string().contains(":1: 65 fields"), "{wrong}");
}

#[test]
fn split_holds_out_every_class_in_proportion_and_loses_nothing() {
    let mnist = mnist();
    let (train, held) = mnist.split(4500);
    assert_eq!((train.len(), held.len()), (4500, 500));
    for digit in 0..10 {
        assert_eq!(held.labels().iter().filter(|&&l| l == digit).count(), 50);
        assert_eq!(train.labels().iter().filter(|&&l| l == digit).count(), 450);
    }
    // Held-out rows are rows 9, 19, 29, ... of the file.
    assert_eq!(held.image(0), mnist.image(9));
    assert_eq!(train.image(9), mnist.image(10));
    let (all, none) = mnist.split(5000);
    assert_eq!((all.len(), none.len()), (5000, 0));
}

#[test]
fn text_corpus_vocab_and_held_out_tail() {
    let corpus = data::read_text(data::data_dir().join(data::TINY_SHAKESPEARE)).unwrap();
    assert_eq!(corpus.vocab.len(), 65);
    assert_eq!(corpus.tokens().len(), 1_115_394);
    assert_eq!(corpus.vocab.chars()[0], '\n');
    assert_eq!(
        corpus.vocab.decode(&corpus.tokens()[..14]),
        "First Citizen:"
    );
    assert_eq!(corpus.held_out().len(), 111_539);
    assert_eq!(corpus.train().len() + corpus.held_out().len(), 1_115_394);
    let line = "To be, or not to be";
    assert_eq!(corpus.vocab.decode(&corpus.vocab.encode(line)), line);
}

#[test]
fn epoch_batches_cover_every_example_once() {
    let order: Vec<usize> = (0..10).rev().collect();
    let dropped: Vec<BatchRows> = EpochBatches::new(order.clone(), 4, Remainder::Drop).collect();
    assert_eq!(dropped.len(), 2);
    assert!(dropped.iter().all(|b| b.rows.len() == 4 && b.valid == 4));
    let padded: Vec<BatchRows> = EpochBatches::new(order.clone(), 4, Remainder::Pad).collect();
    assert_eq!(padded.len(), 3);
    assert!(padded.iter().all(|b| b.rows.len() == 4));
    assert_eq!(
        (padded[2].valid, &padded[2].rows[..]),
        (2, &[1, 0, 9, 8][..])
    );
    let mut seen: Vec<usize> = padded
        .iter()
        .flat_map(|b| b.rows[..b.valid].iter().copied())
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
    assert_eq!(padded[2].mask().to_vec::<f32>(), vec![1.0, 1.0, 0.0, 0.0]);
    let batches = EpochBatches::new(order, 4, Remainder::Pad);
    assert_eq!(batches.len(), 3);
}

#[test]
fn pad_sequences_masks() {
    let seqs = vec![vec![1, 2, 3, 4], vec![], vec![5, 6]];
    let (tokens, mask) = data::pad_sequences(&seqs, None, -1);
    assert_eq!((tokens.shape(), tokens.dtype()), (&[3, 4][..], DType::I32));
    assert_eq!(
        tokens.to_vec::<i32>(),
        vec![1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1]
    );
    assert_eq!(mask.dtype(), DType::F32);
    assert_eq!(mask.sum(-1, false).to_vec::<f32>(), vec![4.0, 0.0, 2.0]);
    // A fixed length truncates and pads.
    let (tokens, mask) = data::pad_sequences(&seqs, Some(3), 0);
    assert_eq!(tokens.to_vec::<i32>(), vec![1, 2, 3, 0, 0, 0, 5, 6, 0]);
    assert_eq!(
        mask.astype(DType::Bool).to_vec::<bool>(),
        vec![true, true, true, false, false, false, true, true, false]
    );
    // A masked mean ignores the padding.
    let masked_mean = (tokens.astype(DType::F32) * &mask).sum(None, false) / mask.sum(None, false);
    assert_eq!(masked_mean.item::<f32>(), 17.0 / 5.0);
}

fn assert_send<T: Send>() {}

#[test]
fn prefetch_yields_the_same_batches_in_order() {
    assert_send::<Array>();
    assert_send::<data::Batch>();
    let (train, _) = mnist().split(4500);
    // A scrambled but fixed order, so that order mistakes show.
    let order: Vec<usize> = (0..4500).map(|i| (i * 7919) % 4500).collect();
    let plain: Vec<(Vec<f32>, Vec<i32>, Vec<f32>)> =
        EpochBatches::new(order.clone(), 128, Remainder::Pad)
            .map(|rows| {
                let b = train.batch(&rows);
                (b.x.to_vec(), b.y.to_vec(), b.mask.to_vec())
            })
            .collect();
    let loader = train.clone();
    let batches =
        EpochBatches::new(order, 128, Remainder::Pad).map(move |rows| loader.batch(&rows));
    let mut count = 0;
    for (k, batch) in data::prefetch(batches, 2).enumerate() {
        // Some device work between batches, as a training step would do.
        let _ = (batch.x.matmul(&batch.x.transpose([1, 0])) * 2.0f32).sum(None, false);
        assert_eq!(batch.x.to_vec::<f32>(), plain[k].0, "batch {k}");
        assert_eq!(batch.y.to_vec::<i32>(), plain[k].1, "batch {k}");
        assert_eq!(batch.mask.to_vec::<f32>(), plain[k].2, "batch {k}");
        count += 1;
    }
    assert_eq!(count, plain.len());
    assert_eq!(count, 36);
}

#[test]
fn prefetch_stops_early_and_reraises_panics() {
    let mut first = data::prefetch(0..1_000_000u64, 1);
    assert_eq!(first.next(), Some(0));
    assert_eq!(first.next(), Some(1));
    drop(first);
    let failing = data::prefetch(
        (0..3).map(|i| if i == 2 { panic!("bad batch {i}") } else { i }),
        1,
    );
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| failing.collect::<Vec<_>>()));
    let message = result.err().unwrap();
    assert_eq!(message.downcast_ref::<String>().unwrap(), "bad batch 2");
}

#[test]
fn shuffled_epochs_cover_every_example_once_and_are_deterministic_per_key() {
    let key = jaxrs::random::key(7);
    let n = 103;
    let mut orders = Vec::new();
    for epoch in 0..3 {
        for remainder in [Remainder::Drop, Remainder::Pad] {
            let batches: Vec<BatchRows> =
                EpochBatches::shuffled(&key, epoch, n, 10, remainder).collect();
            let mut seen: Vec<usize> = batches
                .iter()
                .flat_map(|b| b.rows[..b.valid].iter().copied())
                .collect();
            assert!(batches.iter().all(|b| b.rows.len() == 10));
            match remainder {
                Remainder::Drop => assert_eq!(seen.len(), 100),
                Remainder::Pad => {
                    assert_eq!(batches.len(), 11);
                    seen.sort_unstable();
                    assert_eq!(seen, (0..n).collect::<Vec<_>>(), "epoch {epoch}");
                }
            }
        }
        let order = data::epoch_order(&key, epoch, n);
        // The order is the random module's permutation of the epoch's folded key.
        let expected: Vec<usize> =
            jaxrs::random::permutation(&jaxrs::random::fold_in(&key, epoch), n)
                .to_vec::<i32>()
                .into_iter()
                .map(|i| i as usize)
                .collect();
        assert_eq!(order, expected);
        assert_eq!(
            order,
            data::epoch_order(&key, epoch, n),
            "same key, same order"
        );
        assert_ne!(order, (0..n).collect::<Vec<_>>());
        orders.push(order);
    }
    assert_ne!(orders[0], orders[1]);
    assert_ne!(orders[1], orders[2]);
    assert_ne!(data::epoch_order(&jaxrs::random::key(8), 0, n), orders[0]);
}

#[test]
fn image_set_epochs_prefetch_the_shuffled_batches() {
    let (train, _) = mnist().split(4500);
    let key = jaxrs::random::key(3);
    let order = data::epoch_order(&key, 1, train.len());
    let batches: Vec<data::Batch> = train.epoch(&key, 1, 500, Remainder::Drop).collect();
    assert_eq!(batches.len(), 9);
    for (k, batch) in batches.iter().enumerate() {
        let expected: Vec<i32> = order[k * 500..(k + 1) * 500]
            .iter()
            .map(|&i| train.labels()[i])
            .collect();
        assert_eq!(batch.y.to_vec::<i32>(), expected, "batch {k}");
        assert_eq!(
            &batch.x.to_vec::<f32>()[..784],
            train.image(order[k * 500]),
            "batch {k}"
        );
    }
}

#[test]
fn random_windows_of_the_corpus() {
    let corpus = data::read_text(data::data_dir().join(data::TINY_SHAKESPEARE)).unwrap();
    let train = corpus.train();
    let key = jaxrs::random::key(0);
    let (inputs, targets) = data::random_windows(train, &key, 16, 64);
    assert_eq!(
        (inputs.shape(), inputs.dtype()),
        (&[16, 64][..], DType::I32)
    );
    let (x, y) = (inputs.to_vec::<i32>(), targets.to_vec::<i32>());
    for row in 0..16 {
        let (x, y) = (&x[row * 64..(row + 1) * 64], &y[row * 64..(row + 1) * 64]);
        assert_eq!(&x[1..], &y[..63]);
        // Each window is a piece of the training text.
        let start = train
            .windows(64)
            .position(|w| w == x)
            .expect("a window of the text");
        assert_eq!(train[start + 64], y[63]);
    }
    let (again, _) = data::random_windows(train, &key, 16, 64);
    assert_eq!(again.to_vec::<i32>(), x);
    let (other, _) = data::random_windows(train, &jaxrs::random::key(1), 16, 64);
    assert_ne!(other.to_vec::<i32>(), x);
}
