//! PTB text, its vocabulary (saved as a HuggingFace WordLevel tokenizer), and the tutorial's
//! batching: the id stream cut into `batch` rows, read in windows of `num_steps`.

use anyhow::{bail, ensure, Context, Result};
use candle_core::{Device, Tensor};
use std::collections::HashMap;
use std::path::Path;
use tokenizers::models::wordlevel::WordLevel;
use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
use tokenizers::Tokenizer;

pub const EOS: &str = "<eos>";
pub const UNK: &str = "<unk>";

/// The words of a file, every line ending in `<eos>` (the tutorial's reader).
pub fn read_words(path: &Path) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut words = Vec::new();
    for line in text.lines() {
        words.extend(line.split_whitespace().map(str::to_owned));
        words.push(EOS.to_owned());
    }
    ensure!(
        words.iter().any(|w| w != EOS),
        "{} holds no words; is it the right file?",
        path.display()
    );
    Ok(words)
}

/// Types ordered by descending count, then by the word itself; `<unk>` is always in (last,
/// when the words lack it).
pub fn build_vocab(words: &[String]) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for w in words {
        *counts.entry(w).or_default() += 1;
    }
    let mut types: Vec<(&str, usize)> = counts.into_iter().collect();
    types.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut vocab: Vec<String> = types.into_iter().map(|(w, _)| w.to_owned()).collect();
    if !vocab.iter().any(|w| w == UNK) {
        vocab.push(UNK.to_owned());
    }
    vocab
}

/// A WordLevel tokenizer over `vocab` (id = position) that splits on whitespace only, so PTB
/// tokens such as `<unk>`, `n't` and `$` stay whole.
pub fn tokenizer(vocab: &[String]) -> Result<Tokenizer> {
    let map = vocab
        .iter()
        .enumerate()
        .map(|(i, w)| (w.clone(), i as u32))
        .collect();
    let model = WordLevel::builder()
        .vocab(map)
        .unk_token(UNK.to_owned())
        .build()
        .map_err(anyhow::Error::msg)?;
    let mut tok = Tokenizer::new(model);
    tok.with_pre_tokenizer(Some(WhitespaceSplit));
    Ok(tok)
}

/// Ids of `words`; words outside the vocabulary become `<unk>`.
pub fn encode(tok: &Tokenizer, words: &[String]) -> Result<Vec<u32>> {
    let unk = tok.token_to_id(UNK).context("tokenizer has no <unk>")?;
    Ok(words
        .iter()
        .map(|w| tok.token_to_id(w).unwrap_or(unk))
        .collect())
}

/// The vocabulary of a tokenizer, by id.
pub fn vocab_of(tok: &Tokenizer) -> Vec<String> {
    let mut v: Vec<(String, u32)> = tok.get_vocab(false).into_iter().collect();
    v.sort_by_key(|(_, id)| *id);
    v.into_iter().map(|(w, _)| w).collect()
}

/// The three splits, encoded with the vocabulary of the training split.
pub struct Corpus {
    pub tokenizer: Tokenizer,
    pub train: Vec<u32>,
    pub valid: Vec<u32>,
    pub test: Vec<u32>,
}

impl Corpus {
    /// Reads `ptb.{train,valid,test}.txt` from `dir`; the vocabulary is every word type of
    /// the training split, at most `max_vocab` of them (PTB has 10,000 and maps the rest to
    /// `<unk>` already, so a smaller vocabulary would change the task: it is an error).
    pub fn load(dir: &Path, max_vocab: usize) -> Result<Self> {
        let file = |split: &str| dir.join(format!("ptb.{split}.txt"));
        for split in ["train", "valid", "test"] {
            if !file(split).is_file() {
                bail!(
                    "{} is missing: --data must be a folder with ptb.train.txt, ptb.valid.txt and \
                     ptb.test.txt (the repository ships them in data/ptb)",
                    file(split).display()
                );
            }
        }
        let train_words = read_words(&file("train"))?;
        let vocab = build_vocab(&train_words);
        crate::config::ranges::usage(vocab.len() <= max_vocab, || {
            format!(
                "--vocab-size {max_vocab}: {} has {} word types (with <eos> and <unk>), and the \
                 vocabulary must hold them all",
                file("train").display(),
                vocab.len()
            )
        })?;
        let tokenizer = tokenizer(&vocab)?;
        Ok(Self {
            train: encode(&tokenizer, &train_words)?,
            valid: encode(&tokenizer, &read_words(&file("valid"))?)?,
            test: encode(&tokenizer, &read_words(&file("test"))?)?,
            tokenizer,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(false)
    }
}

/// The tutorial's reader over one id stream.
pub struct Batches<'a> {
    data: &'a [u32],
    batch_size: usize,
    num_steps: usize,
    batch_len: usize,
}

#[allow(clippy::len_without_is_empty)]
impl<'a> Batches<'a> {
    pub fn new(data: &'a [u32], batch_size: usize, num_steps: usize) -> Result<Self> {
        let batch_len = data.len() / batch_size;
        let b = Self {
            data,
            batch_size,
            num_steps,
            batch_len,
        };
        ensure!(
            b.len() > 0,
            "{} words are too few for batches of {batch_size} x {num_steps} steps",
            data.len()
        );
        Ok(b)
    }

    /// Parallel streams.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Batches per epoch: `(batch_len - 1) / num_steps`.
    pub fn len(&self) -> usize {
        self.batch_len.saturating_sub(1) / self.num_steps
    }

    /// The whole stream on `device`, time-major `[batch_len, batch]`, so that every batch is a
    /// view of it (`window`) and no step copies from (pageable) host memory, a copy that may
    /// wait for the device's queue before it returns.
    pub fn upload(&self, device: &Device) -> Result<Tensor> {
        let (b_n, len) = (self.batch_size, self.batch_len);
        let t: Vec<u32> = (0..len)
            .flat_map(|t| (0..b_n).map(move |b| self.data[b * len + t]))
            .collect();
        Ok(Tensor::from_vec(t, (len, b_n), device)?)
    }

    /// Batch `i` of an uploaded stream: time-major `[num_steps, batch]` inputs, and the targets
    /// (the same windows shifted by one word).
    pub fn window(&self, stream: &Tensor, i: usize) -> Result<(Tensor, Tensor)> {
        let at = i * self.num_steps;
        Ok((
            stream.narrow(0, at, self.num_steps)?,
            stream.narrow(0, at + 1, self.num_steps)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn vocabulary_orders_by_count_then_word() {
        let v = build_vocab(&words("b a c b c b <unk> d d d d"));
        assert_eq!(v, ["d", "b", "c", "<unk>", "a"]);
        // Without <unk> in the words: it comes last.
        assert_eq!(build_vocab(&words("b a c b c b")), ["b", "c", "a", "<unk>"]);
    }

    #[test]
    fn lines_end_in_eos_and_unknown_words_become_unk() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, " the cat <unk> \n the dog \n").unwrap();
        let w = read_words(&p).unwrap();
        assert_eq!(w, words("the cat <unk> <eos> the dog <eos>"));
        let tok = tokenizer(&build_vocab(&w)).unwrap();
        let ids = encode(&tok, &words("the bird")).unwrap();
        assert_eq!(ids[1], tok.token_to_id(UNK).unwrap());
        // The HF tokenizer itself agrees, and keeps <unk> and n't whole.
        let enc = tok.encode("the cat <unk>", false).unwrap();
        assert_eq!(
            enc.get_ids(),
            encode(&tok, &words("the cat <unk>")).unwrap().as_slice()
        );
    }

    #[test]
    fn empty_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.txt");
        std::fs::write(&p, "\n\n").unwrap();
        assert!(read_words(&p).unwrap_err().to_string().contains("no words"));
    }

    /// ids 0..26, batch 2 => rows [0..13) and [13..26); steps 3 => (13-1)/3 = 4 batches.
    #[test]
    fn windows_match_the_tutorial_reader() {
        let data: Vec<u32> = (0..26).collect();
        let b = Batches::new(&data, 2, 3).unwrap();
        assert_eq!(b.len(), 4);
        let stream = b.upload(&Device::Cpu).unwrap();
        let get = |i| {
            let (x, y) = b.window(&stream, i).unwrap();
            let flat = |t: Tensor| t.flatten_all().unwrap().to_vec1::<u32>().unwrap();
            (flat(x), flat(y))
        };
        // Time-major [t][b]: row 0 reads 3,4,5 and row 1 reads 16,17,18.
        let (x, y) = get(1);
        assert_eq!(x, [3, 16, 4, 17, 5, 18]);
        assert_eq!(y, [4, 17, 5, 18, 6, 19]);
        let (x, y) = get(3);
        assert_eq!((x[4], x[5], y[4], y[5]), (11, 24, 12, 25));
        assert!(Batches::new(&data[..5], 2, 3).is_err());
    }
}
