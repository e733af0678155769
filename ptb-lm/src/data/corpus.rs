//! A corpus in PTB's format (one sentence a line, words split by spaces, `<unk>` already in
//! the text): its splits' files, its words, and its vocabulary (saved as a HuggingFace
//! WordLevel tokenizer).

use anyhow::{bail, ensure, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
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

/// Where a corpus's splits are: a folder (`--data`) and the files' names in it (`--files`), a
/// pattern in which `{split}` stands for `train`, `valid` and `test`: PTB's `ptb.{split}.txt`
/// by default, WikiText-2's `wiki.{split}.tokens`, say.
#[derive(Clone, Debug, clap::Args)]
pub struct SplitFiles {
    /// Folder with the corpus's train, valid and test files
    #[arg(long = "data", default_value = "data/ptb")]
    pub dir: PathBuf,
    /// Names of the split files in --data, `{split}` standing for train, valid and test (e.g.
    /// wiki.{split}.tokens for WikiText-2)
    #[arg(long = "files", default_value = SplitFiles::PTB, value_parser = SplitFiles::parse_pattern)]
    pub pattern: String,
}

impl SplitFiles {
    /// PTB's names, as the repository ships them in `data/ptb`.
    pub const PTB: &'static str = "ptb.{split}.txt";
    const SPLIT: &'static str = "{split}";

    /// `--files`: a file name with `{split}` in it, and no folder.
    pub fn parse_pattern(s: &str) -> std::result::Result<String, String> {
        match s {
            _ if !s.contains(Self::SPLIT) => Err(format!(
                "needs {} where the split's name goes, as in {}",
                Self::SPLIT,
                Self::PTB
            )),
            _ if s.contains(['/', '\\']) => {
                Err("is a file name inside --data, without a folder".into())
            }
            _ => Ok(s.to_owned()),
        }
    }

    /// The file of `split` (train, valid or test).
    pub fn path(&self, split: &str) -> PathBuf {
        self.dir.join(self.pattern.replace(Self::SPLIT, split))
    }

    /// An error naming the flags when the file of `split` is missing.
    pub fn check(&self, split: &str) -> Result<()> {
        let path = self.path(split);
        if !path.is_file() {
            bail!(
                "{} is missing: --data must be a folder with the train, valid and test files that \
                 --files names ({}; the repository ships PTB's in data/ptb)",
                path.display(),
                self.pattern
            );
        }
        Ok(())
    }
}

/// The three splits, encoded with the vocabulary of the training split.
pub struct Corpus {
    pub tokenizer: Tokenizer,
    pub train: Vec<u32>,
    pub valid: Vec<u32>,
    pub test: Vec<u32>,
}

impl Corpus {
    /// Reads the three splits `files` names; the vocabulary is every word type of the training
    /// split, at most `max_vocab` of them (PTB has 10,000 and maps the rest to `<unk>` already,
    /// so a smaller vocabulary would change the task: it is an error).
    pub fn load(files: &SplitFiles, max_vocab: usize) -> Result<Self> {
        for split in ["train", "valid", "test"] {
            files.check(split)?;
        }
        let file = |split| files.path(split);
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

    /// `--files` takes any names with `{split}` in them: WikiText-2's, say.
    #[test]
    fn split_files_follow_the_pattern() {
        let dir = tempfile::tempdir().unwrap();
        for split in ["train", "valid", "test"] {
            let text = format!(" = {split} = \n the cat sat \n <unk> sat \n");
            std::fs::write(dir.path().join(format!("wiki.{split}.tokens")), text).unwrap();
        }
        let files = |pattern: &str| SplitFiles {
            dir: dir.path().to_owned(),
            pattern: pattern.into(),
        };
        let wiki = files("wiki.{split}.tokens");
        let c = Corpus::load(&wiki, 100).unwrap();
        assert_eq!(c.train.len(), 11);
        assert_eq!(c.valid.len(), c.test.len());
        let e = Corpus::load(&files(SplitFiles::PTB), 100).err().unwrap();
        assert!(e.to_string().contains("ptb.train.txt is missing"), "{e}");
        assert!(SplitFiles::parse_pattern("wiki.{split}.tokens").is_ok());
        assert!(SplitFiles::parse_pattern("wiki.train.tokens").is_err());
        assert!(SplitFiles::parse_pattern("a/{split}.txt").is_err());
    }
}
