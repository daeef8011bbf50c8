//! Models in the differential generator (SIGNALS.md): which contracts
//! declare them, their `models:` section, the `score(m, features)`
//! expressions draw, and the model files those contracts name.
//!
//! The models are a fixed set, written by [`ModelFolder`] for a run: a
//! logistic regression, the two-class form scikit-learn exports, a small
//! tree ensemble and a linear regressor in f64, of one to four features.
//! A score's features are float expressions (which may read windows, and
//! fail), a computed list (`fs`, whose length is usually not the model's:
//! an evaluation error), or, for a model of one feature, a lambda's
//! parameter (`sum(fs, v => score(m, [v]))`, scored where it stands).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use models::testing::{self, Float, Stump};

use super::{Gen, Rng, Ty};

/// Whether the contract of `seed` declares models: about one in five,
/// drawn apart from the contract's own generator (as [`super::windowed`]
/// is), so a contract without models is the one its seed gave before
/// models were generated.
pub fn modelled(seed: u64) -> bool {
    Rng::new(seed.rotate_left(17) ^ 0x4D4F_4445_4C53_2121).chance(20)
}

/// A model file of the set: its file name, its features and the
/// `output:` it is read as.
struct ModelFile {
    file: &'static str,
    features: usize,
    output: &'static str,
}

const MODEL_FILES: [ModelFile; 4] = [
    ModelFile { file: "logistic3.onnx", features: 3, output: "probability" },
    ModelFile { file: "two_class4.onnx", features: 4, output: "probability" },
    ModelFile { file: "trees2.onnx", features: 2, output: "probability" },
    ModelFile { file: "linear1.onnx", features: 1, output: "value" },
];

/// The bytes of [`MODEL_FILES`]' model `file`.
fn model_bytes(file: &str) -> Vec<u8> {
    match file {
        "logistic3.onnx" => testing::logistic(&[0.5, -0.25, 1.0], -1.0),
        "two_class4.onnx" => testing::logistic_two_class(&[0.001, -2.0, 0.5, 3.0], 0.25),
        "trees2.onnx" => testing::tree_classifier(
            2,
            &[
                Stump { feature: 0, threshold: 0.5, if_true: 0.2, if_false: 0.9 },
                Stump { feature: 1, threshold: -1.0, if_true: 0.6, if_false: 0.1 },
                Stump { feature: 0, threshold: 100.0, if_true: 0.3, if_false: 0.7 },
            ],
        ),
        "linear1.onnx" => testing::linear(Float::F64, &[2.5], -1.0),
        _ => unreachable!("a model of the set"),
    }
}

/// A folder holding the model files generated contracts name, removed
/// when dropped.
#[derive(Debug)]
pub struct ModelFolder {
    path: PathBuf,
}

impl ModelFolder {
    /// Writes the model files into a new folder under the system's
    /// temporary folder, named for this process and `tag`.
    pub fn new(tag: u64) -> std::io::Result<ModelFolder> {
        let path = std::env::temp_dir().join(format!("rulec-differential-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        for model in &MODEL_FILES {
            std::fs::write(path.join(model.file), model_bytes(model.file))?;
        }
        Ok(ModelFolder { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ModelFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

impl Gen {
    /// The `models:` section: one to three models of the set, which
    /// expressions may score from then on.
    pub(super) fn models(&mut self, out: &mut String) {
        out.push_str("models:\n");
        let mut declared = Vec::new();
        for m in 0..1 + self.rng.below(3) {
            let model = &MODEL_FILES[self.rng.below(MODEL_FILES.len())];
            let _ = writeln!(
                out,
                "  m{m}:\n    onnx: {}\n    features: {}\n    output: {}",
                model.file, model.features, model.output
            );
            declared.push((format!("m{m}"), model.features));
        }
        self.models = declared;
    }

    /// Sometimes, a score of a declared model, a float.
    pub(super) fn model_score(&mut self) -> Option<String> {
        if self.models.is_empty() || !self.rng.chance(30) {
            return None;
        }
        Some(self.score())
    }

    /// A score of one of the declared models.
    fn score(&mut self) -> String {
        let (model, features) = self.models[self.rng.below(self.models.len())].clone();
        match self.rng.below(10) {
            0 => format!("score({model}, fs)"),
            1 if features == 1 => format!("sum(fs, v => score({model}, [v]))"),
            _ => {
                let values: Vec<String> = (0..features).map(|_| self.feature()).collect();
                format!("score({model}, [{}])", values.join(", "))
            }
        }
    }

    /// Sometimes, a comparison of a score, to put before a rule's
    /// condition.
    pub(super) fn model_guard(&mut self) -> Option<String> {
        if self.models.is_empty() || !self.rng.chance(50) {
            return None;
        }
        let score = self.score();
        let op = self.cmp();
        Some(format!("({score} {op} {})", self.rng.pick(&["0.5", "0.25", "0.9", "1.5"])))
    }

    /// A model feature: mostly an input field as a float, else any float
    /// expression (which may read windows, or fail).
    fn feature(&mut self) -> String {
        if self.rng.chance(40) {
            return self.expr(Ty::Float);
        }
        self.rng
            .pick(&["f", "float(i)", "float(d)", "float(r.a)", "float(len(xs))", "(b ? 1.0 : 0.0)"])
            .to_string()
    }
}
