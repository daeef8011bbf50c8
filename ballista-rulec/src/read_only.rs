//! What a query may do on a cluster: read. A client of the scheduler can
//! be anyone who reaches its port, and an executor runs what the
//! scheduler plans, so a plan that writes files (`COPY ... TO`, `INSERT
//! INTO` a file table), defines tables or views (`CREATE EXTERNAL TABLE`,
//! `CREATE TABLE`, `CREATE VIEW`, `DROP`) or sets the session's options
//! (`SET`) is refused by the scheduler before it is planned, whatever the
//! client. In process, `rulec sql` runs what DataFusion runs, as DuckDB's
//! CLI does (docs/decisions.md, "What a SQL query may do").

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::{Result, plan_err};
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::optimizer::AnalyzerRule;

/// `state` with [`ReadOnly`] first among its analyzer rules.
pub fn read_only(state: SessionState) -> Result<SessionState> {
    Ok(datafusion_rulec::sql::first_analyzer(state, Arc::new(ReadOnly)))
}

/// The analyzer rule refusing a plan that does more than read.
#[derive(Debug, Default)]
pub struct ReadOnly;

impl AnalyzerRule for ReadOnly {
    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let mut plans = vec![&plan];
        while let Some(node) = plans.pop() {
            let what = match node {
                LogicalPlan::Copy(_) => "writes files (COPY)",
                LogicalPlan::Dml(_) => "writes to a table (INSERT, UPDATE, DELETE)",
                LogicalPlan::Ddl(_) => "defines or drops a table, view or schema",
                LogicalPlan::Statement(_) => "sets the session's options or runs a statement",
                _ => {
                    plans.extend(node.inputs());
                    continue;
                }
            };
            return plan_err!(
                "the query {what}, and a cluster only reads: run it with `rulec sql` in process"
            );
        }
        Ok(plan)
    }

    fn name(&self) -> &str {
        "rulec_read_only"
    }
}
