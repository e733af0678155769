//! The `ptb-lm` command end to end on small generated corpora: learning, resume, eval,
//! generate, and the error paths.

use std::path::Path;
use std::process::{Command, Output};

/// A corpus with structure to learn: sentences from a few templates over small word classes.
fn write_corpus(dir: &Path, seed: u64) {
    let subjects = ["the cat", "a dog", "the bird", "my friend"];
    let verbs = ["sees", "likes", "chases", "finds"];
    let objects = ["the ball", "a tree", "the house", "some food"];
    let mut state = seed;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    };
    for (split, lines) in [("train", 600), ("valid", 60), ("test", 60)] {
        let text: String = (0..lines)
            .map(|_| {
                let (s, v, o) = (next(4), next(4), next(4));
                // The object follows the verb: a model can learn v -> o.
                let o = (v + o % 2) % 4;
                format!(" {} {} {} \n", subjects[s], verbs[v], objects[o])
            })
            .collect();
        std::fs::write(dir.join(format!("ptb.{split}.txt")), text).unwrap();
    }
}

/// A temporary folder with a generated corpus in `data/`: `(folder, data)`.
fn corpus(seed: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    write_corpus(&data, seed);
    (tmp, data)
}

/// `corpus(seed)` and a one-epoch run of it in `run/`: `(folder, data, run)`.
fn one_epoch(seed: u64) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let (tmp, data) = corpus(seed);
    let run = tmp.path().join("run");
    stdout(&train(&data, &run, &["--epochs", "1"]));
    (tmp, data, run)
}

const TINY: &[&str] = &[
    "--hidden-size",
    "24",
    "--num-layers",
    "2",
    "--num-steps",
    "6",
    "--batch-size",
    "4",
    "--max-epoch",
    "1",
    "--max-max-epoch",
    "3",
    "--keep-prob",
    "0.8",
    "--init-scale",
    "0.1",
    "--device",
    "cpu",
];

fn ptb_lm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptb-lm"))
        .args(args)
        .output()
        .unwrap()
}

fn train(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "train",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(TINY);
    args.extend_from_slice(extra);
    ptb_lm(&args)
}

/// `ptb-lm eval --split test` of a checkpoint on the CPU, with `extra` flags.
fn eval_test(checkpoint: &Path, data: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        "--checkpoint",
        checkpoint.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--device",
        "cpu",
    ];
    args.extend_from_slice(extra);
    ptb_lm(&args)
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "expected a failure, got: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// `(train, valid)` perplexities of every epoch line.
fn perplexities(out: &str) -> Vec<(f64, f64)> {
    out.lines()
        .filter(|l| l.starts_with("Epoch:"))
        .map(|l| {
            let num = |key: &str| {
                let rest = &l[l.find(key).unwrap() + key.len()..];
                rest.split_whitespace()
                    .next()
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            };
            (num("Train Perplexity: "), num("Valid Perplexity: "))
        })
        .collect()
}

fn test_perplexity(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("Test Perplexity:"))
        .unwrap()
        .to_owned()
}

#[test]
fn learns_and_resumes_exactly() {
    let (tmp, data) = corpus(1);

    // Uninterrupted: three epochs.
    let a = tmp.path().join("a");
    let full_run = train(&data, &a, &[]);
    let full = stdout(&full_run);
    // Without a terminal, progress comes as plain lines at every tenth of a pass.
    let log = String::from_utf8_lossy(&full_run.stderr);
    assert!(
        log.contains("epoch 1: 10% (") && log.contains("valid 3: 100% ("),
        "{log}"
    );
    assert!(log.contains("the fused op's CPU path"), "{log}");
    let ppl = perplexities(&full);
    assert_eq!(ppl.len(), 3, "{full}");
    // 18 types; the templates leave about 4 choices per word: far below uniform.
    assert!(
        ppl[2].1 < ppl[0].1 && ppl[2].1 < 8.0,
        "valid perplexity did not fall: {ppl:?}"
    );
    assert!(full.contains("Learning rate: 1.000") && full.contains("Learning rate: 0.500"));

    // One epoch, then resumed for the rest: the same numbers and the same weights.
    let b = tmp.path().join("b");
    let first = stdout(&train(&data, &b, &["--epochs", "1"]));
    assert!(!first.contains("Test Perplexity"));
    let rest = stdout(&train(&data, &b, &["--resume"]));
    let split: Vec<_> = perplexities(&first)
        .into_iter()
        .chain(perplexities(&rest))
        .collect();
    assert_eq!(split, ppl);
    assert_eq!(test_perplexity(&rest), test_perplexity(&full));
    let weights = |d: &Path| {
        candle_core::safetensors::load(d.join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap()
    };
    let (wa, wb) = (weights(&a), weights(&b));
    assert_eq!(wa.len(), 4);
    for (name, t) in &wa {
        let same = t
            .eq(&wb[name])
            .unwrap()
            .to_dtype(candle_core::DType::F32)
            .unwrap()
            .mean_all()
            .unwrap();
        assert_eq!(
            same.to_scalar::<f32>().unwrap(),
            1.0,
            "resumed weights differ in {name}"
        );
    }
    // The metrics agree but for timings.
    let metrics = |d: &Path| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(d.join("metrics.jsonl")).unwrap();
        text.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                if let Some(o) = v.as_object_mut() {
                    o.remove("seconds");
                    o.remove("words_per_second");
                }
                v
            })
            .collect()
    };
    assert_eq!(metrics(&a), metrics(&b));
    assert_eq!(metrics(&a).len(), 4);
    let same_weights = |x: &Path, y: &Path| {
        let (wx, wy) = (weights(x), weights(y));
        assert_eq!(wx.len(), wy.len());
        for (name, t) in &wx {
            let (t, u) = (t.flatten_all().unwrap(), wy[name].flatten_all().unwrap());
            let bits = |t: &candle_core::Tensor| t.to_vec1::<f32>().unwrap();
            assert!(bits(&t) == bits(&u), "resumed weights differ in {name}");
        }
    };

    // Stopped inside an epoch, as Ctrl-C stops it, twice, and resumed each time: the same
    // numbers and the same weights as the run never stopped.
    let d = tmp.path().join("d");
    let stop = |extra: &[&str], epoch: usize| -> String {
        let o = train(&data, &d, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "{err}");
        assert!(
            err.contains(&format!("stopped in epoch {epoch} after")),
            "{err}"
        );
        assert!(err.contains("--resume continues exactly"), "{err}");
        String::from_utf8(o.stdout).unwrap()
    };
    let first = stop(&["--stop-after", "5"], 1);
    assert!(perplexities(&first).is_empty(), "{first}");
    let second = stop(&["--resume", "--stop-after", "200"], 2);
    let rest = stdout(&train(&data, &d, &["--resume"]));
    let split: Vec<_> = perplexities(&second)
        .into_iter()
        .chain(perplexities(&rest))
        .collect();
    assert_eq!(split, ppl);
    assert_eq!(test_perplexity(&rest), test_perplexity(&full));
    same_weights(&a, &d);
    assert_eq!(metrics(&a), metrics(&d));
    // A checkpoint every few minutes (here after every step) changes nothing either.
    let e = tmp.path().join("e");
    let often = stdout(&train(
        &data,
        &e,
        &["--epochs", "1", "--save-every", "0.00001"],
    ));
    assert_eq!(perplexities(&often)[..], ppl[..1]);

    // eval on the saved checkpoint prints the number training printed.
    let eval = stdout(&eval_test(&a, &data, &[]));
    assert_eq!(test_perplexity(&eval), test_perplexity(&full));
    // One word per step (the tutorial's test setting) over the same stream: the same words,
    // the state carried the same way, so the same perplexity up to rounding.
    let one_word = stdout(&eval_test(&a, &data, &["--num-steps", "1"]));
    let value = |out: &str| -> f64 { test_perplexity(out)[16..].trim().parse().unwrap() };
    let (windows, one) = (value(&eval), value(&one_word));
    assert!((windows / one - 1.0).abs() < 1e-4, "{windows} vs {one}");
    // The tokenizer next to the checkpoint loads with HF tokenizers and knows the corpus.
    let tok = tokenizers::Tokenizer::from_file(a.join("tokenizer.json")).unwrap();
    // 16 words, <eos>, and <unk> (absent from train) last.
    assert_eq!(tok.get_vocab_size(false), 18);
    assert_eq!(tok.token_to_id("<unk>"), Some(17));

    let text = stdout(&ptb_lm(&[
        "generate",
        "--checkpoint",
        a.to_str().unwrap(),
        "--words",
        "12",
        "--prompt",
        "the cat",
        "--device",
        "cpu",
    ]));
    assert!(
        text.starts_with("the cat") && text.split_whitespace().count() >= 3,
        "{text}"
    );

    let svg = tmp.path().join("curve.svg");
    let metrics_path = a.join("metrics.jsonl");
    stdout(&ptb_lm(&[
        "plot",
        "--metrics",
        metrics_path.to_str().unwrap(),
        "--out",
        svg.to_str().unwrap(),
    ]));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let e = stderr(&ptb_lm(&[
        "plot",
        "--metrics",
        metrics_path.to_str().unwrap(),
        "--out",
        "curve.pdf",
    ]));
    assert!(e.contains(".svg or .png"), "{e}");

    // The CandleNn kernel trains the same model.
    let c = tmp.path().join("c");
    let loop_run = stdout(&train(&data, &c, &["--rnn", "candle-nn", "--epochs", "1"]));
    assert_eq!(perplexities(&loop_run).len(), 1);
}

/// Half-precision steps over f32 weights: they learn like f32, save f32 weights, and evaluate
/// (in f32) to the number training printed; f16 scales its loss and says so.
#[test]
fn half_precision_trains_f32_weights() {
    for half in ["bf16", "f16"] {
        half_precision_run(half);
    }
}

fn half_precision_run(half: &str) {
    let (tmp, data) = corpus(3);
    let out = tmp.path().join(half);
    let run = stdout(&train(&data, &out, &["--precision", half]));
    assert_eq!(run.contains("loss scale: "), half == "f16", "{run}");
    let ppl = perplexities(&run);
    assert!(
        ppl[2].1 < ppl[0].1 && ppl[2].1 < 8.0,
        "valid perplexity did not fall: {ppl:?}"
    );
    let w =
        candle_core::safetensors::load(out.join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
    assert!(w.values().all(|t| t.dtype() == candle_core::DType::F32));
    let eval = stdout(&eval_test(&out, &data, &[]));
    assert_eq!(test_perplexity(&eval), test_perplexity(&run));
    // Resumed after one epoch, with the loss scale where it was: the same run (on the CPU the
    // persistent kernels are the same CPU path; `--rnn auto` keeps the resumed run's).
    let b = tmp.path().join(format!("{half}-resumed"));
    let first_args = ["--precision", half, "--epochs", "1", "--rnn", "persistent"];
    let first = stdout(&train(&data, &b, &first_args));
    let rest = stdout(&train(&data, &b, &["--precision", half, "--resume"]));
    let lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("Epoch") || l.starts_with("Test"))
            .map(|l| l.split(" wps").next().unwrap().to_owned())
            .collect()
    };
    assert_eq!([lines(&first), lines(&rest)].concat(), lines(&run));
}

#[test]
fn bad_input_is_a_clear_error_and_overwrites_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();

    let e = stderr(&train(&data, &tmp.path().join("x"), &[]));
    assert!(e.contains("ptb.train.txt is missing"), "{e}");

    write_corpus(&data, 2);
    std::fs::write(data.join("ptb.valid.txt"), "\n\n").unwrap();
    let e = stderr(&train(&data, &tmp.path().join("x"), &[]));
    assert!(e.contains("ptb.valid.txt holds no words"), "{e}");

    write_corpus(&data, 2);
    let half_loop = ["--precision", "bf16", "--rnn", "candle-nn"];
    let e = stderr(&train(&data, &tmp.path().join("x"), &half_loop));
    assert!(e.contains("candle-nn computes in f32 only"), "{e}");

    write_corpus(&data, 2);
    let out = tmp.path().join("run");
    stdout(&train(&data, &out, &["--epochs", "1"]));
    let saved = std::fs::read(out.join("model.safetensors")).unwrap();

    // Again without --resume, or resumed with another config: refused, checkpoint untouched.
    let e = stderr(&train(&data, &out, &[]));
    assert!(e.contains("already holds a checkpoint"), "{e}");
    let e = stderr(&train(&data, &out, &["--resume", "--lr-decay", "0.9"]));
    assert!(
        e.contains("trained with --lr-decay 0.5, this run asks for 0.9"),
        "{e}"
    );
    let e = stderr(&train(&data, &out, &["--resume", "--rnn", "persistent"]));
    assert!(
        e.contains("trained with --rnn fused, this run asks for persistent"),
        "{e}"
    );
    assert!(std::fs::read(out.join("model.safetensors")).unwrap() == saved);

    // A corrupt checkpoint.
    std::fs::write(out.join("model.safetensors"), b"not a checkpoint").unwrap();
    let e = stderr(&train(&data, &out, &["--resume"]));
    assert!(e.contains("not a valid ptb-lm checkpoint"), "{e}");
    let e = stderr(&ptb_lm(&[
        "eval",
        "--checkpoint",
        tmp.path().join("none").to_str().unwrap(),
    ]));
    assert!(e.contains("reading checkpoint"), "{e}");
}

/// `--epochs N` counts every epoch of the run, so the same command resumed ends where an
/// uninterrupted one would, and says so when there is nothing left.
#[test]
fn epochs_count_in_total_across_resumes() {
    let (tmp, data) = corpus(4);
    let out = tmp.path().join("run");
    let first = stdout(&train(&data, &out, &["--epochs", "1"]));
    assert_eq!(perplexities(&first).len(), 1);
    let second = stdout(&train(&data, &out, &["--epochs", "2", "--resume"]));
    let lines: Vec<&str> = second.lines().filter(|l| l.starts_with("Epoch:")).collect();
    assert_eq!(lines.len(), 1, "{second}");
    assert!(lines[0].starts_with("Epoch: 2 "), "{second}");
    let again = train(&data, &out, &["--epochs", "2", "--resume"]);
    assert!(perplexities(&stdout(&again)).is_empty());
    let log = String::from_utf8_lossy(&again.stderr);
    assert!(log.contains("2 of 3 epochs already done"), "{log}");
}

/// Exit code and standard error of a run expected to fail.
fn failure(o: &Output) -> (i32, String) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "a panic: {err}");
    (o.status.code().unwrap_or(-1), err)
}

/// Every numeric flag out of range, and values that only the data can refuse: exit code 2, an
/// `Error:`/`error:` line naming the flag, never a panic.
#[test]
fn bad_values_are_usage_errors_naming_the_flag() {
    let (tmp, data, run) = one_epoch(5);
    let (d, r) = (data.to_str().unwrap(), run.to_str().unwrap());
    let x = tmp.path().join("x");
    let x = x.to_str().unwrap();
    let train_with = |extra: &[&'static str]| -> Vec<&str> {
        let mut a = vec!["train", "--data", d, "--out", x, "--device", "cpu"];
        a.extend_from_slice(extra);
        a
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["eval", "--checkpoint", r, "--batch-size", "0"],
            "--batch-size",
        ),
        (
            vec!["eval", "--checkpoint", r, "--num-steps", "0"],
            "--num-steps",
        ),
        (
            vec!["eval", "--checkpoint", r, "--max-batches", "0"],
            "--max-batches",
        ),
        (train_with(&["--learning-rate=-1"]), "--learning-rate"),
        (train_with(&["--lr-decay=-1"]), "--lr-decay"),
        (train_with(&["--lr-decay", "1.5"]), "--lr-decay"),
        (train_with(&["--keep-prob", "0"]), "--keep-prob"),
        (train_with(&["--init-scale", "nan"]), "--init-scale"),
        (train_with(&["--max-grad-norm", "0"]), "--max-grad-norm"),
        (train_with(&["--vocab-size", "1"]), "--vocab-size"),
        // The corpus has 18 types with <eos> and <unk>.
        (train_with(&["--vocab-size", "17"]), "--vocab-size 17"),
        (train_with(&["--max-batches", "0"]), "--max-batches"),
        (train_with(&["--epochs", "0"]), "--epochs"),
        (train_with(&["--batch-size", "0"]), "--batch-size"),
        (train_with(&["--hidden-size", "big"]), "--hidden-size"),
        (train_with(&["--num-layers", "0"]), "--num-layers"),
        (train_with(&["--max-max-epoch", "0"]), "--max-max-epoch"),
        (
            train_with(&["--hidden-size", "16384", "--num-layers", "64"]),
            "--hidden-size 16384",
        ),
        (train_with(&["--device", "gpu"]), "--device"),
        (
            vec!["generate", "--checkpoint", r, "--temperature", "0"],
            "--temperature",
        ),
        (
            vec!["generate", "--checkpoint", r, "--temperature=-1"],
            "--temperature",
        ),
        (
            vec!["generate", "--checkpoint", r, "--words", "0"],
            "--words",
        ),
        (
            vec!["bench", "--device", "cpu", "--batches", "0"],
            "--batches",
        ),
        (vec!["plot", "--metrics", r, "--out", "curve.pdf"], "--out"),
    ];
    for (args, flag) in cases {
        let (code, err) = failure(&ptb_lm(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?} should name {flag}: {err}");
        assert!(
            err.starts_with("Error: ") || err.starts_with("error: "),
            "{args:?}: {err}"
        );
    }
    assert!(!Path::new(x).join("model.safetensors").exists());
}

/// An ordinary failure is one `Error:` line naming the file, exit code 1, and no backtrace even
/// when RUST_BACKTRACE is set in the environment.
#[test]
fn errors_are_one_clean_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("none");
    let o = Command::new(env!("CARGO_BIN_EXE_ptb-lm"))
        .args(["eval", "--checkpoint", missing.to_str().unwrap()])
        .env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .unwrap();
    let (code, err) = failure(&o);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("Error: reading checkpoint"), "{err}");
    assert!(err.contains(missing.to_str().unwrap()), "{err}");

    let bad_json = tmp.path().join("no-such-folder").join("bench.json");
    let o = ptb_lm(&[
        "bench",
        "--device",
        "cpu",
        "--batches",
        "1",
        "--warmup",
        "0",
        "--json",
        bad_json.to_str().unwrap(),
    ]);
    let (code, err) = failure(&o);
    assert_eq!(code, 1);
    assert!(err.contains(bad_json.to_str().unwrap()), "{err}");
}

/// A second process on the same --out is refused while the first holds it; the folder's
/// checkpoint is untouched.
#[test]
fn a_run_folder_is_locked_while_written() {
    let (_tmp, data, out) = one_epoch(6);
    std::fs::write(out.join("model.tmp"), b"left by a crash").unwrap();
    let saved = std::fs::read(out.join("model.safetensors")).unwrap();
    // This process stands in for a run in progress: it holds the folder's lock.
    let lock = std::fs::File::open(out.join(".lock")).unwrap();
    lock.try_lock().unwrap();
    let (code, err) = failure(&train(&data, &out, &["--resume"]));
    assert_eq!(code, 1);
    assert!(err.contains("in use by another ptb-lm run"), "{err}");
    assert_eq!(std::fs::read(out.join("model.safetensors")).unwrap(), saved);
    drop(lock);
    let rest = stdout(&train(&data, &out, &["--resume", "--epochs", "2"]));
    assert_eq!(perplexities(&rest).len(), 1);
    assert!(!out.join("model.tmp").exists(), "the stale file stays");
}

/// Sampling at a vanishing temperature is greedy, not NaN; unknown prompt words are named.
#[test]
fn generate_is_greedy_near_zero_and_names_unknown_words() {
    let (_tmp, _data, out) = one_epoch(7);
    let sample = |seed: &str| {
        ptb_lm(&[
            "generate",
            "--checkpoint",
            out.to_str().unwrap(),
            "--device",
            "cpu",
            "--words",
            "8",
            "--temperature",
            "1e-300",
            "--seed",
            seed,
            "--prompt",
            "the zebra sees",
        ])
    };
    let (a, b) = (sample("1"), sample("2"));
    assert_eq!(stdout(&a), stdout(&b), "greedy sampling ignores the seed");
    assert!(stdout(&a).starts_with("the zebra sees"), "{}", stdout(&a));
    let err = String::from_utf8_lossy(&a.stderr);
    assert!(err.contains("read as <unk>: zebra"), "{err}");
}

/// A corpus under other names (WikiText-2's) trains and evaluates with `--files`, exactly as
/// the same text under PTB's names does.
#[test]
fn another_corpus_s_file_names_are_a_flag() {
    let (tmp, data, run) = one_epoch(5);
    let wiki = tmp.path().join("wiki");
    std::fs::create_dir(&wiki).unwrap();
    for split in ["train", "valid", "test"] {
        std::fs::copy(
            data.join(format!("ptb.{split}.txt")),
            wiki.join(format!("wiki.{split}.tokens")),
        )
        .unwrap();
    }
    let files = ["--files", "wiki.{split}.tokens"];
    let wiki_run = tmp.path().join("wiki-run");
    let out = stdout(&train(
        &wiki,
        &wiki_run,
        &[&["--epochs", "1"][..], &files].concat(),
    ));
    assert_eq!(perplexities(&out).len(), 1, "{out}");
    let ptb = test_perplexity(&stdout(&eval_test(&run, &data, &[])));
    let other = test_perplexity(&stdout(&eval_test(&wiki_run, &wiki, &files)));
    assert_eq!(ptb, other);
    // Without the flag the folder holds no PTB files, and the error says which flag names them.
    let e = stderr(&train(&wiki, &tmp.path().join("x"), &["--epochs", "1"]));
    assert!(
        e.contains("ptb.train.txt is missing") && e.contains("--files"),
        "{e}"
    );
}
