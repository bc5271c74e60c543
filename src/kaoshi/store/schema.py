"""The store's tables, and telling a kaoshi store from any other file before anything is written to it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kaoshi.store.errors import StoreError, store_error

# 2: a sample's prompt and question may be held once in `texts` for every sample that has them (TEXT_REFS);
# a kaoshi that reads up to 1 would read those samples' prompts as empty, so it is refused such a store.
SCHEMA_VERSION = 2
_SAMPLES_DDL = """CREATE TABLE IF NOT EXISTS samples (
    run TEXT NOT NULL REFERENCES runs(name) ON DELETE CASCADE,
    question_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    qtype TEXT NOT NULL,
    gold TEXT,
    points REAL NOT NULL,
    subject TEXT,
    domain TEXT,
    category TEXT,
    question TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status TEXT NOT NULL,
    shots INTEGER NOT NULL DEFAULT 0,
    extracted_by TEXT NOT NULL DEFAULT 'rules',
    extractor_response TEXT,
    response TEXT,
    logprobs TEXT,
    answer TEXT,
    correct INTEGER,
    score REAL,
    latency_s REAL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    error TEXT,
    truncated INTEGER NOT NULL DEFAULT 0,
    served_model TEXT,
    reasoning TEXT,
    tokens_reasoning INTEGER,
    fingerprint TEXT,
    question_group TEXT,
    tokens_cached INTEGER,
    request_key INTEGER,
    answered_from TEXT,
    batch_id TEXT,
    extractor_usage TEXT,
    prompt_ref BLOB,
    question_ref BLOB,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, question_id)
)"""
TABLES: dict[str, str] = {
    "meta": "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "runs": """CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    model TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL
)""",
    # The process that last opened a run; a run it left `running` after dying reads as interrupted.
    # A table of its own, so that stores from before it open unchanged.
    "run_owners": """CREATE TABLE IF NOT EXISTS run_owners (
    run TEXT PRIMARY KEY REFERENCES runs(name) ON DELETE CASCADE,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    opened_at REAL NOT NULL
)""",
    # The processes executing a run, each with a heartbeat, and the questions each has claimed (kaoshi.store
    # .leases): no foreign key, since a lease is taken before the run is first created.
    "leases": """CREATE TABLE IF NOT EXISTS leases (
    run TEXT NOT NULL,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL,
    PRIMARY KEY (run, holder)
)""",
    "claims": """CREATE TABLE IF NOT EXISTS claims (
    run TEXT NOT NULL,
    question_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    PRIMARY KEY (run, question_id)
)""",
    "samples": _SAMPLES_DDL,
    # A question's samples after its first (kaoshi run --repeats K: samples 1..K-1), in a table of their
    # own: every reader of `samples` sees one sample a question, a run of its own (sample 0), as before;
    # what reads k samples (reports' avg@k, `kaoshi samples`, the viewer) reads both. A column added to
    # `samples` later is added here too (ADDED_COLUMNS).
    "repeat_samples": _SAMPLES_DDL.replace(
        "samples (", "repeat_samples (\n    sample INTEGER NOT NULL,", 1
    ).replace("PRIMARY KEY (run, question_id)", "PRIMARY KEY (run, question_id, sample)"),
    # The provider batches a run sent (kaoshi run --batch; kaoshi.store.batches): no foreign key, like the
    # leases, and a table of its own, so that stores from before it open unchanged.
    "batches": """CREATE TABLE IF NOT EXISTS batches (
    run TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'model',
    input_file TEXT NOT NULL,
    batch_id TEXT,
    endpoint TEXT NOT NULL,
    requests TEXT NOT NULL,
    status TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    collected_at REAL,
    PRIMARY KEY (run, input_file)
)""",
    "grades": """CREATE TABLE IF NOT EXISTS grades (
    run TEXT NOT NULL REFERENCES runs(name) ON DELETE CASCADE,
    question_id TEXT NOT NULL,
    grader TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    points REAL,
    rounds TEXT NOT NULL,
    prompt_version INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, question_id, grader)
)""",
    # The texts samples share, each once (TEXT_REFS): the prompt of a question repeats its exemplars, and
    # every run of the exam holds the same prompts and questions, so that stored inline they were most of a
    # store (4,549 bytes a sample at 1,000,000 samples, 52% prompt, 36% question). A text is found by its
    # question's position and a 128-bit BLAKE2b digest of it, as a content-addressed store finds it: the
    # key is the text, to a collision probability no store reaches, and a writer never reads before it
    # writes (INSERT OR IGNORE). The position first: a run writes its questions in order, so the entries
    # a transaction adds share a page or two of the key's index, where keyed by the digest alone each went
    # to a page of its own (a first run's samples stored raw: 8,500-9,200 a second so, 10,200-11,800 with
    # the position first, 13,300-14,600 with the texts in the rows).
    "texts": """CREATE TABLE IF NOT EXISTS texts (
    position INTEGER NOT NULL,
    digest BLOB NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (position, digest)
)""",
    # What a command counted of a run, kept under the signature of the rows it counted
    # (kaoshi.store.summaries): the next read takes it while the run's rows are as they were.
    "run_summaries": """CREATE TABLE IF NOT EXISTS run_summaries (
    run TEXT NOT NULL,
    kind TEXT NOT NULL,
    signature TEXT NOT NULL,
    marker TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run, kind)
)""",
    # How often a run's rows in a table were changed in place (updated or deleted), counted by the
    # triggers of SUMMARY_TRIGGERS; an insert shows in the rows' count and largest rowid instead.
    "run_versions": """CREATE TABLE IF NOT EXISTS run_versions (
    run TEXT NOT NULL,
    tbl TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (run, tbl)
)""",
}
# Indexes a store gains when it is opened for writing (kaoshi run, ...): the samples of a run in question
# order, so that `kaoshi samples` and the viewer read a run's first rows without sorting all of them. An
# existing store is indexed once (about a second per 100,000 samples); a store only read goes on without.
INDEXES: dict[str, str] = {
    "samples_by_position": "CREATE INDEX IF NOT EXISTS samples_by_position ON samples (run, position)",
    "repeat_samples_by_position": (
        "CREATE INDEX IF NOT EXISTS repeat_samples_by_position ON repeat_samples (run, position, sample)"
    ),
    # what `kaoshi runs` and the viewer's runs page count (kaoshi.store.aggregates, kaoshi.view.live), read
    # from the index alone: a run's rows are pages of prompt text, its outcomes a few bytes each
    "samples_tally": (
        "CREATE INDEX IF NOT EXISTS samples_tally ON samples (run, status, correct, score, points)"
    ),
    # what a run's summary reads (kaoshi.store.columns.score_kinds, outcome_keys, output_counts), from the
    # index alone: what it tallies first, so that counting a run's samples by kind is one ordered pass with no
    # sort, then each sample's key and output counts. About 400 bytes a sample (a tenth of a row).
    "samples_scores": (
        "CREATE INDEX IF NOT EXISTS samples_scores ON samples (run, qtype, subject, domain, category, "
        "question_group, status, correct, score, points, truncated, gold, answer, served_model, position, "
        "question_id, fingerprint, extracted_by, tokens_in, tokens_out, tokens_reasoning, latency_s)"
    ),
    "repeat_samples_tally": (
        "CREATE INDEX IF NOT EXISTS repeat_samples_tally "
        "ON repeat_samples (run, status, correct, score, points)"
    ),
}
# Made the first time a run takes answers from the cache (kaoshi.runner.cache), in a store opened for
# writing: the answers of the store by their request's key. Not with the other indexes: every answer a
# run stores writes an entry in each index (this one cost a twelfth of the write rate), and a store whose
# runs never use the cache (local models, by default) needs none. Without it a lookup reads the rows.
REQUEST_INDEXES: dict[str, str] = {
    "samples_requests": (
        "CREATE INDEX IF NOT EXISTS samples_requests ON samples (request_key) WHERE request_key IS NOT NULL"
    ),
    "repeat_samples_requests": (
        "CREATE INDEX IF NOT EXISTS repeat_samples_requests ON repeat_samples (request_key) "
        "WHERE request_key IS NOT NULL"
    ),
}
# Columns that later kaoshi versions added to a table every store has: opening a store for writing adds them
# (their default for the rows already there); a store opened read-only reads that default instead. The
# schema version stays, since a kaoshi from before them reads a store that has them unchanged; all but the
# TEXT_REFS, which make the store schema 2.
ADDED_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "samples": (
        ("truncated", "INTEGER NOT NULL DEFAULT 0", "0"),
        # the model a server said answered, where it was not the one asked for (models.base.ModelOutput)
        ("served_model", "TEXT", "NULL"),
        # the model's reasoning, kept apart from its answer text (models.base.ModelOutput)
        ("reasoning", "TEXT", "NULL"),
        # tokens of that reasoning (models.base.ModelOutput.reasoning_tokens)
        ("tokens_reasoning", "INTEGER", "NULL"),
        # the question's content fingerprint (store.pairing), read by summaries instead of the question
        # (store.columns); rows written before it have none and are fingerprinted as they are read
        ("fingerprint", "TEXT", "NULL"),
        # the question's `group` as JSON ('null': none), read by summaries instead of the question; NULL in
        # rows written before it, whose group is read from their question
        ("question_group", "TEXT", "NULL"),
        # prompt tokens the server read from its prompt cache (models.base.ModelOutput.cached_tokens)
        ("tokens_cached", "INTEGER", "NULL"),
        # the key of the request a generated answer was asked with (runner.cache), by which a later run
        # finds it; where an answer taken from another run came from (runner.cache, runner.reuse)
        ("request_key", "INTEGER", "NULL"),
        ("answered_from", "TEXT", "NULL"),
        # the provider batch that answered it (kaoshi run --batch), priced at the batch price
        ("batch_id", "TEXT", "NULL"),
        # what the LLM extractor's call about it cost (JSON: tokens_in, tokens_out, tokens_cached, batch_id)
        ("extractor_usage", "TEXT", "NULL"),
        # the digests of the sample's prompt and question in `texts` (TEXT_REFS), their own columns then
        # empty; NULL: held in the row, as every row written before schema 2 holds them
        ("prompt_ref", "BLOB", "NULL"),
        ("question_ref", "BLOB", "NULL"),
    ),
    # the judge prompt's version (kaoshi.prompts.judge); grades from before it was recorded are version 1
    "grades": (("prompt_version", "INTEGER NOT NULL DEFAULT 1", "1"),),
}
# The samples after a question's first have every column a first sample has (a column added to `samples`
# later is added to both; the table was made with the ones above).
ADDED_COLUMNS["repeat_samples"] = ADDED_COLUMNS["samples"]
# A sample's columns a writer holds in `texts`, by the column that then holds their digest. The one change
# of ADDED_COLUMNS that a kaoshi from before them cannot read: a store opened for writing is schema 2.
TEXT_REFS: dict[str, str] = {"prompt": "prompt_ref", "question": "question_ref"}
# What a writer adds to `texts` with each sample (rows.written_row): a text already there is left as it is.
INSERT_TEXT = "INSERT OR IGNORE INTO texts (position, digest, body) VALUES (?, ?, ?)"


def _counted_change(run: str, table: str) -> str:
    """A trigger's statement that counts one change in place of `run`'s rows in `table` (run_versions)."""
    return (
        f"INSERT OR REPLACE INTO run_versions (run, tbl, version) SELECT {run}, '{table}', "
        f"COALESCE((SELECT version FROM run_versions WHERE run = {run} AND tbl = '{table}'), 0) + 1"
    )


# Made with the tables when a store is opened for writing: every UPDATE and DELETE of a sample or a grade
# (a run removed or renamed, an edit by hand or by another tool) counts in its run's version, so that a
# summary kept of the run (kaoshi.store.summaries) is never taken for its rows once they changed. None on
# INSERT: answers are stored at full speed, and a new row shows in the rows' count and largest rowid. A row
# replaced (INSERT OR REPLACE, as answers and grades are written) counts as deleted where the connection has
# PRAGMA recursive_triggers on, as the store's has (kaoshi.store.Store): without it REPLACE's delete fires
# no trigger, and only the new row's rowid, which a dump and restore numbers again, tells. A run removed or
# renamed takes its kept summaries with it.
SUMMARY_TRIGGERS: dict[str, str] = {
    **{
        f"{table}_changed": (
            f"CREATE TRIGGER IF NOT EXISTS {table}_changed AFTER UPDATE ON {table} BEGIN "
            f"{_counted_change('OLD.run', table)}; "
            f"{_counted_change('NEW.run', table)} WHERE NEW.run IS NOT OLD.run; END"
        )
        for table in ("samples", "repeat_samples", "grades")
    },
    **{
        f"{table}_removed": (
            f"CREATE TRIGGER IF NOT EXISTS {table}_removed AFTER DELETE ON {table} BEGIN "
            f"{_counted_change('OLD.run', table)}; END"
        )
        for table in ("samples", "repeat_samples", "grades")
    },
    "runs_removed": (
        "CREATE TRIGGER IF NOT EXISTS runs_removed AFTER DELETE ON runs BEGIN "
        "DELETE FROM run_summaries WHERE run = OLD.name; END"
    ),
    "runs_renamed": (
        "CREATE TRIGGER IF NOT EXISTS runs_renamed AFTER UPDATE OF name ON runs BEGIN "
        "DELETE FROM run_summaries WHERE run IN (OLD.name, NEW.name); END"
    ),
}
# Every kaoshi store since the first has these; the other tables came later.
_FIRST_TABLES = frozenset({"meta", "runs", "samples"})


def stored_schema_version(db: sqlite3.Connection, path: Path) -> int | None:
    """The schema version of the kaoshi store `db` reads, None for an empty database. Only reads: another
    program's database, a newer kaoshi's store or a non-SQLite file is a StoreError, left untouched."""
    try:
        objects = db.execute("SELECT type, name FROM sqlite_master").fetchall()
        if not objects:
            return None
        tables = {name for kind, name in objects if kind == "table"}
        if not tables >= _FIRST_TABLES:
            names = sorted(tables or {name for _, name in objects})
            shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
            raise StoreError(
                f"{path} is not a usable kaoshi store (another program's SQLite database, with tables "
                f"{shown}); left it untouched: pass another --store"
            )
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise store_error(path, exc) from exc
    if row is None:
        return SCHEMA_VERSION  # created by a kaoshi that stopped before writing its version
    try:
        version = int(row[0])
    except ValueError:
        raise StoreError(
            f"{path} is not a usable kaoshi store (schema version {row[0]!r}); left it untouched"
        ) from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer kaoshi (schema {version}, this kaoshi reads up to "
            f"{SCHEMA_VERSION}); left it untouched: upgrade kaoshi (pip install -U kaoshi)"
        )
    return version


def create_missing_tables(db: sqlite3.Connection) -> None:
    """Make a new store, or add the tables later kaoshi versions brought; one transaction, so a store is
    never left half made. Writes nothing when nothing is missing (opening a store takes no write lock)."""
    if _missing_schema(db) is None:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        # asked again under the lock: another process opening the store at the same moment may have made
        # them while this one waited (an ALTER TABLE of a column it added would fail)
        statements = _missing_schema(db)
        for ddl in statements or ():
            db.execute(ddl)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _missing_schema(db: sqlite3.Connection) -> list[str] | None:
    """The statements that bring the store to this kaoshi's schema; None when it has it."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [ddl for name, ddl in TABLES.items() if name not in tables]
    columns = [
        f"ALTER TABLE {table} ADD COLUMN {name} {ddl}"
        for table in ADDED_COLUMNS
        if table in tables
        for name, ddl, _ in missing_columns(db, table)
    ]
    needs_version = "meta" not in tables or _version_row(db) != str(SCHEMA_VERSION)
    made = "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger')"
    have = {row[0] for row in db.execute(made)}
    indexes = [ddl for name, ddl in {**INDEXES, **SUMMARY_TRIGGERS}.items() if name not in have]
    if not missing and not columns and not needs_version and not indexes:
        return None
    statements = [*missing, *columns, *indexes]
    # Triggers made again (dropped by hand, or by a tool that rebuilt a table) missed the changes made
    # without them: nothing kept before can be trusted.
    if "run_summaries" in tables and any(name not in have for name in SUMMARY_TRIGGERS):
        statements.append("DELETE FROM run_summaries")
    if needs_version:  # a new store, or one of schema 1 (its rows stay as they are: TEXT_REFS)
        statements.append(f"INSERT OR REPLACE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}')")
    return statements


def _version_row(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return None if row is None else str(row[0])


def missing_columns(db: sqlite3.Connection, table: str) -> list[tuple[str, str, str]]:
    """The ADDED_COLUMNS of `table` that this store's table lacks (name, definition, value read instead)."""
    have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    return [column for column in ADDED_COLUMNS.get(table, ()) if column[0] not in have]


# What a summary never reads of a sample, replaced in a light read (kaoshi.store.Store.iter_samples): the
# prompt (half a row: it repeats its exemplars), the model's text but where the answer was cut off (the
# output profile looks for a loop at its end), the log-probabilities and the extractor's reply.
LIGHT_COLUMNS: dict[str, str] = {
    "prompt": "''",
    "response": "CASE WHEN truncated THEN response END",
    "reasoning": "CASE WHEN truncated THEN reasoning END",
    "logprobs": "NULL",
    "extractor_response": "NULL",
    "extractor_usage": "NULL",
}


def select_list(db: sqlite3.Connection, table: str, columns: tuple[str, ...], *, light: bool = False) -> str:
    """`columns` for a SELECT on `table`, a column the store predates read as its default ('0 AS x');
    `light`: the LIGHT_COLUMNS left out (what summaries read)."""
    defaults = {name: value for name, _, value in missing_columns(db, table)}
    if light:
        # a column the store predates stays its default (truncated then reads 0)
        defaults = {**{c: v for c, v in LIGHT_COLUMNS.items() if c not in defaults}, **defaults}
    if table in ("samples", "repeat_samples"):
        texts = {c: stored_text(db, table, c) for c in TEXT_REFS if c in columns and c not in defaults}
        defaults = {**texts, **defaults}
    return ", ".join(f"{defaults[c]} AS {c}" if c in defaults else c for c in columns)


def stored_text(db: sqlite3.Connection, table: str, column: str, *, alias: str = "") -> str:
    """The SQL reading a sample's `column` (one of TEXT_REFS) in `table` (named `alias` in the query)
    wherever it is held: in `texts` under its position and digest, else in the row (rows from before
    schema 2, and empty texts). NULL where they name no text (a store damaged or edited by hand):
    rows.missing_text."""
    ref = TEXT_REFS[column]
    if any(name == ref for name, _, _ in missing_columns(db, table)):
        return f"{alias}.{column}" if alias else column
    row = alias or table  # qualified: `texts` has a position too
    # main.texts where the file has it: a store opened read-only without one has an empty stand-in in
    # temp (add_reading_stand_ins), which SQLite would read first once another process made the table
    made = db.execute("SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = 'texts'").fetchone()
    texts = "main.texts" if made else "texts"
    return (
        f"CASE WHEN {row}.{ref} IS NULL THEN {row}.{column} ELSE (SELECT body FROM {texts} "
        f"WHERE texts.position = {row}.position AND texts.digest = {row}.{ref}) END"
    )


def held_in_row(db: sqlite3.Connection, table: str) -> str:
    """The SQL condition true of a row of `table` that holds its prompt or question itself, not in `texts`
    (rows from before schema 2; TEXT_REFS)."""
    lacking = {name for name, _, _ in missing_columns(db, table)}
    return " OR ".join(
        f"{column} != ''" if ref in lacking else f"({ref} IS NULL AND {column} != '')"
        for column, ref in TEXT_REFS.items()
    )


def add_reading_stand_ins(db: sqlite3.Connection) -> None:
    """For a store opened read-only that predates some tables: empty temporary ones of the same shape,
    so that queries need not ask which tables exist; the file is not touched."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for name, ddl in TABLES.items():
        if name not in tables:
            db.execute(ddl.replace("CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE IF NOT EXISTS", 1))
