//! The data: a corpus in PTB's format read into ids (`corpus`), and the tutorial's batches over
//! an id stream (`batches`).

mod batches;
pub mod corpus;

pub use batches::Batches;
pub use corpus::{encode, read_words, vocab_of, Corpus, SplitFiles, EOS, UNK};
