"""``metrics.text2sql.non_execution_accuracy``: unitxt's ``SQLNonExecutionAccuracy``, SQL compared without
running it.

The SQL is taken from the prediction as unitxt does: the first fenced ````sql`` block; else the
first statement starting with SELECT, INSERT, UPDATE, DELETE or WITH (at the start, after a newline
or after a ``label:``) up to its first ``;``; else from that keyword to the end; else nothing. Against
the first reference, per instance (0 or 1 each, mean over instances, each with an interval):

- ``sqlglot_validity``: sqlglot parses it in the SQLite dialect (an empty query does not parse);
- ``sqlparse_validity``: sqlparse parses it with no error token at the top level of a statement;
- ``sqlglot_equivalence`` (main): both parse (sqlglot, no dialect) into a SELECT whose normalised
  SQL of the select list (aliases dropped, compared as a set) and of the FROM, WHERE, GROUP BY,
  HAVING and ORDER BY clauses are equal;
- ``sqlglot_optimized_equivalence``: sqlglot's optimizer applied to both lower-cased queries gives
  trees whose ``sqlglot.diff`` is only ``Keep`` edits;
- ``sqlparse_equivalence``: unitxt's naive sqlparse comparison of one SELECT statement each: the
  select list as a set of column texts (an ``AS`` alias or a trailing bare alias word dropped) and the
  text of each clause from its keyword to the next clause keyword, compared upper-cased without spaces;
- ``sql_exact_match``: equal after trimming, dropping trailing ``;``, collapsing whitespace, upper case;
- ``sql_syntactic_equivalence``: any of the four equivalences.

sqlglot and sqlparse are the libraries unitxt uses; the comparisons around them are written here to
give unitxt's values (no library ships them). Each comparison that raises counts as not equal, as unitxt.
"""

from __future__ import annotations

import re
from typing import Any

from assay.metrics import InstanceMetric
from assay_unitxt.catalog.inputs import CheckedInputs

__all__ = ["SqlNonExecutionAccuracy", "extract_sql"]

_START = r"(?:^|\n|:\s*)"
_KEYWORD = r"(?:SELECT|INSERT|UPDATE|DELETE|WITH)\s+"
_FENCED = re.compile(r"```sql\s+(.*?)```", re.IGNORECASE | re.DOTALL)
_TO_SEMICOLON = re.compile(rf"{_START}({_KEYWORD}.*?;)", re.IGNORECASE | re.DOTALL)
_TO_END = re.compile(rf"{_START}({_KEYWORD}.*)", re.IGNORECASE | re.DOTALL)
_CLAUSES = ("FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT")


def extract_sql(text: str) -> str:
    """The first SQL query of ``text`` as unitxt finds it (see the module docstring), or ``""``."""
    for pattern in (_FENCED, _TO_SEMICOLON, _TO_END):
        found = pattern.search(text)
        if found:
            return found.group(1).strip()
    return ""


def _sqlglot_valid(sql: str) -> bool:
    import sqlglot  # deferred: optional dependency (the catalog extra)

    if not sql.strip():
        return False
    try:
        sqlglot.parse(sql, read="sqlite")
    except Exception:  # noqa: BLE001 -- any sqlglot failure is "does not parse", as in unitxt
        return False
    return True


def _sqlparse_valid(sql: str) -> bool:
    import sqlparse  # deferred: optional dependency (the catalog extra)
    from sqlparse.tokens import Error

    if not sql.strip():
        return False
    try:
        return not any(tok.ttype == Error for stmt in sqlparse.parse(sql) for tok in stmt.tokens)
    except Exception:  # noqa: BLE001 -- sqlparse failing is "does not parse", as in unitxt
        return False


def _sqlglot_equivalent(sql1: str, sql2: str) -> bool:
    import sqlglot
    from sqlglot import exp

    try:
        trees = [sqlglot.parse_one(s, read="") for s in (sql1, sql2)]
    except Exception:  # noqa: BLE001 -- unitxt counts any parse failure as not equivalent
        return False
    if not all(isinstance(t, exp.Select) for t in trees):
        return False

    def columns(tree: Any) -> frozenset[str]:
        out = set()
        for item in tree.expressions:
            item = item.copy()
            item.set("alias", None)
            out.add(item.sql(dialect="", normalize=True))
        return frozenset(out)

    def clause(tree: Any, key: str) -> str:
        part = tree.args.get(key)
        return part.sql(dialect="", normalize=True) if part else ""

    return columns(trees[0]) == columns(trees[1]) and all(
        clause(trees[0], k) == clause(trees[1], k) for k in ("from", "where", "group", "having", "order"))


def _sqlglot_optimized_equivalent(sql1: str, sql2: str) -> bool:
    import sqlglot
    from sqlglot.optimizer import optimize

    try:
        a, b = (optimize(sqlglot.parse_one(s.lower()).sql(pretty=True)) for s in (sql1, sql2))
        return all(type(edit).__name__ == "Keep" for edit in sqlglot.diff(a, b))
    except Exception:  # noqa: BLE001 -- unitxt counts any failure as not equivalent
        return False


def _without_alias(column: str) -> str:
    column = column.strip()
    at = column.upper().find(" AS ")
    if at >= 0:
        return column[:at].strip()
    words = column.split()
    return " ".join(words[:-1]) if len(words) > 1 else column


def _select_parts(sql: str) -> dict[str, Any] | None:
    import sqlparse
    from sqlparse.sql import Identifier, IdentifierList
    from sqlparse.tokens import DML, Keyword

    statements = sqlparse.parse(sql)
    if len(statements) != 1:
        return None
    tokens = statements[0].tokens
    if not any(t.ttype is DML and t.value.upper() == "SELECT" for t in tokens):
        return None
    columns: set[str] = set()
    seen_select = False
    for tok in tokens:
        if tok.ttype is DML and tok.value.upper() == "SELECT":
            seen_select = True
        elif seen_select:
            if tok.ttype is Keyword and tok.value.upper() in _CLAUSES:
                break
            if isinstance(tok, IdentifierList):
                columns.update(_without_alias(i.value) for i in tok.get_identifiers())
            elif isinstance(tok, Identifier) or tok.value.strip():
                columns.add(_without_alias(tok.value if isinstance(tok, Identifier) else tok.value.strip()))

    def clause(keyword: str) -> str:
        inside, parts = False, []
        for tok in tokens:
            if tok.ttype is Keyword:
                word = tok.value.upper()
                if word.startswith(keyword):
                    inside = True
                    continue
                if inside and word in _CLAUSES:
                    break
            if inside:
                parts.append(tok.value)
        return " ".join(parts).strip().replace(" ", "").upper()

    return {"columns": frozenset(columns), **{k: clause(k) for k in ("FROM", "WHERE", "GROUP", "HAVING", "ORDER")}}


def _sqlparse_equivalent(sql1: str, sql2: str) -> bool:
    try:
        a, b = _select_parts(sql1), _select_parts(sql2)
    except Exception:  # noqa: BLE001 -- unitxt counts any failure as not equivalent
        return False
    return bool(a) and bool(b) and a == b


def _exact(sql1: str, sql2: str) -> bool:
    def norm(s: str) -> str:
        return re.sub(r"\s+", " ", s.strip().rstrip(";")).upper()
    return norm(sql1) == norm(sql2)


class SqlNonExecutionAccuracy(CheckedInputs, InstanceMetric):
    """unitxt's ``SQLNonExecutionAccuracy`` (see the module docstring)."""

    input_type = "text"
    examples = [{"predictions": ["```sql\nSELECT name FROM users WHERE id = 1\n```", "SELECT * FROM t"],
                 "references": [["select name from users where id = 1"], ["SELECT a FROM t"]]}]

    main_score = "sqlglot_equivalence"
    score_names = ["sqlglot_validity", "sqlparse_validity", "sqlglot_equivalence", "sqlglot_optimized_equivalence",
                   "sqlparse_equivalence", "sql_exact_match", "sql_syntactic_equivalence"]
    ci_scores = score_names
    prediction_type = str
    requirements = {"sqlglot": "sqlglot", "sqlparse": "sqlparse"}

    def compute_instance(self, prediction: Any, references: Any, task_data: Any = None) -> dict[str, float]:
        gold, sql = references[0], extract_sql(prediction)
        glot_ok, parse_ok = _sqlglot_valid(sql), _sqlparse_valid(sql)
        out = {
            "sqlglot_validity": glot_ok,
            "sqlparse_validity": parse_ok,
            "sqlglot_equivalence": glot_ok and _sqlglot_equivalent(sql, gold),
            "sqlglot_optimized_equivalence": glot_ok and _sqlglot_optimized_equivalent(sql, gold),
            "sqlparse_equivalence": parse_ok and _sqlparse_equivalent(sql, gold),
            "sql_exact_match": _exact(sql, gold),
        }
        out["sql_syntactic_equivalence"] = any(out[k] for k in ("sqlglot_equivalence", "sqlglot_optimized_equivalence",
                                                                  "sqlparse_equivalence", "sql_exact_match"))
        return {k: float(v) for k, v in out.items()}
