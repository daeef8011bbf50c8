//! Tables named by their path (`FROM 'transfers.parquet'`), checked
//! before DataFusion reads them: DataFusion's own factory of such tables
//! ([`DynamicListTableFactory`]) behind one that first says what is wrong
//! with a local path in the words `rulec eval --input` uses.
//!
//! - a path that does not exist is "cannot read PATH: ..." (DataFusion
//!   said "table 'datafusion.public.PATH' not found");
//! - a Parquet file whose footer does not read (cut short, a metadata
//!   length past the file's size, an empty file) is "PATH is not a
//!   readable Parquet file: ..." (DataFusion's reader panicked on a length
//!   past the size, and read an empty file as a table without columns).
//!
//! And a CSV file's timestamps stay text: DataFusion guesses a column of
//! `2026-01-01T10:00:00` to be timestamps and reads a value without an
//! offset as UTC, where every other way into a contract refuses it ("the
//! offset is missing"). As text, each value meets the contract's own
//! parser, as in `rulec eval --input`; a query that wants timestamps
//! writes `CAST(ts AS TIMESTAMP)`.
//!
//! Other names (a table registered in the session, a URL) go to
//! DataFusion's factory as they are.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::catalog::{DynamicFileCatalog, TableProvider, UrlTableFactory};
use datafusion::common::{Result, plan_err};
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::listing::{ListingTable, ListingTableConfig};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion::prelude::SessionContext;

/// A context over `state` whose tables are also files named by their
/// path, checked first (module doc): `SessionContext::enable_url_table`
/// with [`CheckedFiles`] in front.
pub fn context(state: SessionState) -> SessionContext {
    let inner = Arc::new(DynamicListTableFactory::default());
    let factory = Arc::new(CheckedFiles { inner: Arc::clone(&inner) });
    let catalogs = Arc::new(DynamicFileCatalog::new(Arc::clone(state.catalog_list()), factory));
    let ctx: SessionContext =
        SessionStateBuilder::new_from_existing(state).with_catalog_list(catalogs).build().into();
    inner.session_store().with_state(ctx.state_weak_ref());
    ctx
}

/// DataFusion's factory of tables from paths, a local path checked first.
#[derive(Debug)]
struct CheckedFiles {
    inner: Arc<DynamicListTableFactory>,
}

#[async_trait]
impl UrlTableFactory for CheckedFiles {
    async fn try_new(&self, url: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(path) = local_path(url) {
            check(path)?;
        }
        let Some(table) = self.inner.try_new(url).await? else { return Ok(None) };
        Ok(Some(csv_timestamps_as_text(table)?))
    }
}

/// `table`, or when it is CSV with columns DataFusion took for
/// timestamps, the same table with those columns read as text.
fn csv_timestamps_as_text(table: Arc<dyn TableProvider>) -> Result<Arc<dyn TableProvider>> {
    let Some(listing) = table.downcast_ref::<ListingTable>() else { return Ok(table) };
    let options = listing.options();
    if !options.format.is::<CsvFormat>() {
        return Ok(table);
    }
    let schema = listing.schema();
    let partitions = options.table_partition_cols.len();
    let file_fields = &schema.fields()[..schema.fields().len().saturating_sub(partitions)];
    if !file_fields.iter().any(|field| matches!(field.data_type(), DataType::Timestamp(..))) {
        return Ok(table);
    }
    let text = |field: &FieldRef| match field.data_type() {
        DataType::Timestamp(..) => Arc::new(field.as_ref().clone().with_data_type(DataType::Utf8)),
        _ => Arc::clone(field),
    };
    let file_schema = Arc::new(Schema::new(file_fields.iter().map(text).collect::<Vec<_>>()));
    let config = ListingTableConfig::new_with_multi_paths(listing.table_paths().clone())
        .with_listing_options(options.clone())
        .with_schema(file_schema);
    Ok(Arc::new(ListingTable::try_new(config)?))
}

/// The local path `url` names, when it looks like a file's: a scheme of
/// `file://`, or none and a folder or an extension in it.
fn local_path(url: &str) -> Option<&Path> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(Path::new(path));
    }
    let path = Path::new(url);
    let looks_like_a_file = url.contains('/') || path.extension().is_some();
    (!url.contains("://") && looks_like_a_file).then_some(path)
}

/// Refuses a path that does not exist, and a Parquet file (or one in a
/// folder) whose footer does not read.
fn check(path: &Path) -> Result<()> {
    let name = path.display();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) => return plan_err!("cannot read {name}: {e}"),
    };
    if metadata.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return Ok(()) };
        for entry in entries.flatten() {
            let file = entry.path();
            if file.is_file() && is_parquet(&file) {
                check_parquet(&file)?;
            }
        }
        return Ok(());
    }
    if is_parquet(path) { check_parquet(path) } else { Ok(()) }
}

fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Reads the footer of the Parquet file at `path` as `rulec eval --input`
/// opens it (`batch::source::open`: the reader's panics contained, its
/// messages).
fn check_parquet(path: &Path) -> Result<()> {
    match batch::source::open(path, batch::InputFormat::Parquet) {
        Ok(_) => Ok(()),
        Err(message) => plan_err!("{message}"),
    }
}
