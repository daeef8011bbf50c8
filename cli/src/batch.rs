//! Batch evaluation: `rulec eval TARGET --input FILE`, the command line
//! over the `batch` crate: the flags as a job, the file as a source, the
//! output as a writer, the exit code from the summary.

use std::path::PathBuf;

use batch::{InputFormat, OutputFormat, result_parts};
use runtime::ContractSet;

use crate::{Failure, Outcome};

#[derive(Debug)]
pub struct Settings {
    pub input: PathBuf,
    pub input_format: Option<InputFormat>,
    /// Protobuf input: the schema (`.proto` or a descriptor set) and the message's name.
    pub proto: Option<PathBuf>,
    pub message: Option<String>,
    pub output: Option<PathBuf>,
    pub output_format: Option<OutputFormat>,
    pub channel: Option<String>,
    pub fields: Option<String>,
    pub keep: Option<String>,
    pub threads: Option<usize>,
}

pub fn run(set: &ContractSet, settings: &Settings) -> Outcome {
    let [contract] = set.contracts() else {
        return Err(Failure::Usage(format!(
            "batch mode evaluates one contract; the target holds {} ({})",
            set.len(),
            set.names().collect::<Vec<_>>().join(", ")
        )));
    };
    let input_format = settings.input_format.unwrap_or_else(|| InputFormat::of_path(&settings.input));
    let output_format = settings
        .output_format
        .unwrap_or_else(|| settings.output.as_deref().map_or(OutputFormat::Ndjson, OutputFormat::of_path));
    let parts = match &settings.fields {
        Some(fields) => result_parts(fields).map_err(|e| Failure::Usage(format!("--fields: {e}")))?,
        None => runtime::result::Parts::ALL,
    };
    let job_settings = batch::Settings {
        channel: settings.channel.clone(),
        parts,
        keep: settings.keep.as_deref().map(split_list).unwrap_or_default(),
        output: output_format,
        // The engine's --timeout-ms, if given, is the channel context's.
        limit: None,
    };
    batch::job::channel_context(contract, settings.channel.as_deref(), "--channel")
        .map_err(Failure::Usage)?;
    let mut source = open_source(settings, input_format)?;
    let job =
        batch::Job::new(contract.clone(), &job_settings, source.schema().as_ref()).map_err(Failure::Usage)?;
    let writer =
        batch::output::Writer::create(settings.output.as_deref(), output_format, job.result_schema())
            .map_err(Failure::Usage)?;
    let threads =
        settings.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let progress = batch::Progress::on_stderr(true);
    let summary = batch::run(&job, source.as_mut(), writer, threads, &progress);
    progress.finish();
    let summary = summary.map_err(Failure::Usage)?;
    if summary.failed == 0 { Ok(()) } else { Err(Failure::Reported) }
}

/// The input as a source: Protobuf with its schema, any other format by
/// itself (`--proto` and `--message` only go with Protobuf).
fn open_source(
    settings: &Settings,
    format: batch::InputFormat,
) -> Result<Box<dyn batch::source::Source>, Failure> {
    if format != batch::InputFormat::Protobuf {
        if settings.proto.is_some() || settings.message.is_some() {
            return Err(Failure::Usage(format!(
                "--proto and --message are for Protobuf input (`.pb`, or --input-format protobuf); {} is read as {}",
                settings.input.display(),
                format.name()
            )));
        }
        return batch::source::open(&settings.input, format).map_err(Failure::Usage);
    }
    let schema = settings.proto.as_deref().ok_or_else(|| {
        Failure::Usage("Protobuf input needs its schema: --proto FILE (.proto or a descriptor set)".into())
    })?;
    let message = batch::source::protobuf::load_schema(schema, settings.message.as_deref())
        .map_err(|e| Failure::Usage(format!("--proto: {e}")))?;
    let reader = batch::source::ProtobufReader::open(&settings.input, message).map_err(Failure::Usage)?;
    Ok(Box::new(reader))
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}
