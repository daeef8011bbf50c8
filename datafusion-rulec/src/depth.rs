//! A query's plan and expressions nested no deeper than [`MAX_DEPTH`]: an
//! analyzer rule that runs before every other, in every session rulec
//! makes (`rulec sql`, the cluster's scheduler and executors).
//!
//! DataFusion walks plans and expressions recursively, and some of its
//! walks (derived comparisons and hashes, dropping a tree) are not
//! protected against deep recursion: a chain of thousands of `+` or `AND`
//! overflowed a thread's stack and aborted the process, on a cluster the
//! shared scheduler. The depth is measured here without recursion, and a
//! deeper query is a planning error that says so. rulec's threads also
//! get stacks of [`THREAD_STACK`] bytes, so the walks before this rule
//! (parsing, the SQL planner) and dropping a refused tree have room.
//!
//! The limit is DuckDB's default `max_expression_depth`.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The deepest a query's expressions (and its plan) may nest.
pub const MAX_DEPTH: usize = 1000;

/// The stack of each thread that plans or runs a query.
pub const THREAD_STACK: usize = 64 << 20;

/// The analyzer rule refusing queries deeper than [`MAX_DEPTH`].
#[derive(Debug, Default)]
pub struct DepthLimit;

impl AnalyzerRule for DepthLimit {
    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        check_plan(&plan)?;
        Ok(plan)
    }

    fn name(&self) -> &str {
        "rulec_depth_limit"
    }
}

/// Refuses `root` when a plan node or an expression in it nests deeper
/// than [`MAX_DEPTH`], walking with a stack of its own.
pub fn check_plan(root: &LogicalPlan) -> Result<()> {
    check_plan_at(root, 1)
}

/// [`check_plan`] of a plan at `depth` (a subquery's plan is one deeper
/// than the plan it is in; the walk into it is the one recursion, as deep
/// as the limit at most).
fn check_plan_at(root: &LogicalPlan, depth: usize) -> Result<()> {
    let mut plans = vec![(root, depth)];
    while let Some((plan, depth)) = plans.pop() {
        if depth > MAX_DEPTH {
            return plan_err!("the query's plan nests more than {MAX_DEPTH} deep, which rulec does not plan");
        }
        plan.apply_expressions(|expr| check_expression(expr).map(|()| TreeNodeRecursion::Continue))?;
        plan.apply_subqueries(|subquery| {
            check_plan_at(subquery, depth + 1).map(|()| TreeNodeRecursion::Continue)
        })?;
        plans.extend(plan.inputs().into_iter().map(|input| (input, depth + 1)));
    }
    Ok(())
}

/// Refuses `root` when it nests deeper than [`MAX_DEPTH`].
fn check_expression(root: &Expr) -> Result<()> {
    let mut exprs = vec![(root, 1)];
    while let Some((expr, depth)) = exprs.pop() {
        if depth > MAX_DEPTH {
            return plan_err!(
                "an expression of the query nests more than {MAX_DEPTH} deep (a chain of {MAX_DEPTH} \
                 `+` or `AND` is that deep), which rulec does not plan: split it, or use `IN (...)` for a \
                 long list of alternatives"
            );
        }
        expr.apply_children(|child| {
            exprs.push((child, depth + 1));
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use datafusion::logical_expr::{col, lit};

    use super::*;

    fn chain(terms: usize) -> Expr {
        (1..terms).fold(col("a"), |sum, _| sum + lit(1))
    }

    #[test]
    fn a_chain_as_deep_as_the_limit_passes_and_a_deeper_one_is_refused() {
        assert!(check_expression(&chain(MAX_DEPTH)).is_ok());
        let refused = check_expression(&chain(MAX_DEPTH + 1)).expect_err("refused");
        assert!(refused.to_string().contains("nests more than 1000 deep"), "{refused}");
    }
}
