"""Embedding-table loader (face-data protocol): detection rules, the row filter and its counts, one
test per malformed input, writing, and manifests."""

import gzip
import hashlib
import json

import numpy as np
import pytest

from epsaudit.data import (
    DROP_LABEL,
    DROP_NONFINITE,
    DROP_NORM,
    EmbeddingFileError,
    EmbeddingTable,
    check_same_dimension,
    load_embeddings,
    manifest_entry,
    sha256_file,
    verify_manifest,
    write_embeddings,
)
from epsaudit.data.manifest import _read_manifest as read_manifest, _write_manifest as write_manifest
from epsaudit.data.table import _load_many as load_many


def write(tmp_path, text, name="emb.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def table_text(rows=(("a", 3), ("b", 3)), d=3, sep=",", header=None, seed=0):
    """Header ``identity,e0..`` and ``rows`` = ((label, count), ...) of random values."""
    rng = np.random.default_rng(seed)
    header = header or ["identity"] + [f"e{j}" for j in range(d)]
    lines = [sep.join(header)]
    for label, count in rows:
        for _ in range(count):
            lines.append(sep.join([label] + [f"{v:.6f}" for v in rng.normal(size=d)]))
    return "\n".join(lines) + "\n"


def expect_error(path, match, **kwargs):
    with pytest.raises(EmbeddingFileError, match=match) as info:
        load_embeddings(path, **kwargs)
    assert str(path) in str(info.value)  # every message names the file
    return str(info.value)


# --- round trip and detection ------------------------------------------------------------------


def test_round_trip_write_load(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 5)) * 3
    labels = np.repeat(["alice", "bob", "carol"], 4)
    ids = [f"{i:04d}" for i in range(12)]  # number-like ids stay text
    path = write_embeddings(tmp_path / "rt.csv", labels, ids, x)
    table = load_embeddings(path)
    assert table.label_col == "identity" and table.image_col == "image_id"
    assert table.embedding_cols == tuple(f"e{j}" for j in range(5))
    assert list(table.labels) == list(labels) and list(table.image_ids) == ids
    expected = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(table.embeddings, expected, rtol=0, atol=1e-6)  # %.7g
    np.testing.assert_allclose(np.linalg.norm(table.embeddings, axis=1), 1.0)
    assert table.identities == ("alice", "bob", "carol") and table.dim == 5
    groups = table.groups()
    assert list(groups) == ["alice", "bob", "carol"] and groups["bob"].shape == (4, 5)
    assert table.counts == {"rows_read": 12, "dropped_missing_label": 0, "dropped_nonfinite": 0,
                            "dropped_norm": 0, "dropped_duplicate": 0, "dropped_label_conflict": 0,
                            "rows_kept": 12, "identities": 3, "single_row_identities": 0, "dim": 5,
                            "labels_normalised": 0, "label_collisions": 0, "image_ids_missing": 0,
                            "image_ids_normalised": 0}
    assert table.sha256 == sha256_file(path)


def test_write_embeddings_without_image_ids_and_bad_input(tmp_path):
    path = write_embeddings(tmp_path / "n.csv", ["a", "a", "b", "b"], None, np.eye(4))
    assert path.read_text().splitlines()[0] == "identity,e0,e1,e2,e3"
    assert load_embeddings(path).image_ids is None
    with pytest.raises(ValueError, match="non-finite value at row 1"):
        write_embeddings(tmp_path / "x.csv", ["a", "b"], None, [[1.0, 2.0], [np.nan, 1.0]])
    with pytest.raises(ValueError, match="row 1 has a missing or blank label"):
        write_embeddings(tmp_path / "x.csv", ["a", " "], None, np.eye(2))
    with pytest.raises(ValueError, match="3 labels for 2"):
        write_embeddings(tmp_path / "x.csv", ["a", "b", "c"], None, np.eye(2))


@pytest.mark.parametrize("names", [
    ["emb_0", "emb_1", "emb_2"], ["x1", "x2", "x3"], ["0", "1", "2"], ["dim000", "dim001", "dim002"],
])
def test_auto_detects_named_blocks(tmp_path, names):
    path = write(tmp_path, table_text(header=["person"] + names))
    table = load_embeddings(path)
    assert table.label_col == "person" and table.embedding_cols == tuple(names)


def test_block_wins_over_other_numeric_columns_which_are_reported(tmp_path):
    rng = np.random.default_rng(0)
    lines = ["id,name,quality,e0,e1,e2"]
    for i in range(6):
        lines.append(f"{i},{'ab'[i % 2]},{rng.random():.3f}," + ",".join(f"{v:.4f}" for v in rng.normal(size=3)))
    table = load_embeddings(write(tmp_path, "\n".join(lines) + "\n"))
    assert table.label_col == "name"  # the numeric "id" is never taken as the label
    assert table.embedding_cols == ("e0", "e1", "e2")
    assert any("ignored columns: 'id', 'quality'" in note for note in table.notes)
    assert "ignored columns" in table.summary()


def test_fallback_uses_all_numeric_columns_without_a_block(tmp_path):
    path = write(tmp_path, table_text(header=["who", "alpha", "beta", "gamma"]))
    table = load_embeddings(path)
    assert table.label_col == "who" and table.embedding_cols == ("alpha", "beta", "gamma")
    assert any("no e0..e{d-1}-style block" in note for note in table.notes)


def test_label_falls_back_to_first_non_numeric_column(tmp_path):
    text = table_text(header=["celebrity", "e0", "e1", "e2"])
    assert load_embeddings(write(tmp_path, text)).label_col == "celebrity"


def test_explicit_label_and_embedding_columns(tmp_path):
    rng = np.random.default_rng(2)
    lines = ["who,orig_0,orig_1,orig_2,gen_0,gen_1,gen_2"]
    for i in range(8):
        lines.append(f"p{i % 2}," + ",".join(f"{v:.5f}" for v in rng.normal(size=6)))
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(EmbeddingFileError, match="2 embedding column blocks of the same width.*--embedding-cols"):
        load_embeddings(path)
    table = load_embeddings(path, label_col="who", embedding_cols="gen_0:gen_2")
    assert table.embedding_cols == ("gen_0", "gen_1", "gen_2")
    assert load_embeddings(path, embedding_cols="orig_0,gen_2").embedding_cols == ("orig_0", "gen_2")
    assert load_embeddings(path, embedding_cols=["gen_1", "gen_0"]).embedding_cols == ("gen_1", "gen_0")
    msg = expect_error(path, "embedding column 'gen_9' is not in the header", embedding_cols="gen_0,gen_9")
    assert "'orig_0'" in msg  # lists the available columns
    expect_error(path, r"range 'gen_2:gen_0'.*comes before", embedding_cols="gen_2:gen_0")
    expect_error(path, "label column 'person' is not in the header", label_col="person")


def test_quoted_labels_with_delimiters_and_gzip(tmp_path):
    text = 'identity,e0,e1\n"Smith, J",1,0\n"Smith, J",0,1\n"Doe, A",1,1\n"Doe, A",2,1\n'
    table = load_embeddings(write(tmp_path, text))
    assert table.identities == ("Doe, A", "Smith, J")
    gz = tmp_path / "emb.csv.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    np.testing.assert_array_equal(load_embeddings(gz).embeddings, table.embeddings)


def test_utf8_bom_is_removed_and_reported(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + table_text().encode())
    table = load_embeddings(path)
    assert table.label_col == "identity" and table.bom  # not "\ufeffidentity"
    assert "byte-order mark removed" in table.summary()


@pytest.mark.parametrize("sep, shown", [(";", "';'"), ("\t", "'\\t'")])
def test_semicolon_and_tab_delimiters_are_detected_and_reported(tmp_path, sep, shown):
    table = load_embeddings(write(tmp_path, table_text(sep=sep)))
    assert table.delimiter == sep and table.dim == 3 and table.n_rows == 6
    assert f"delimiter {shown} (auto-detected)" in table.summary()


def test_numeric_label_column_given_explicitly_is_read_as_strings(tmp_path):
    text = "id,e0,e1\n7,1,0\n7,0,1\n12,1,1\n12,1,2\n"
    path = write(tmp_path, text)
    table = load_embeddings(path, label_col="id")
    assert table.identities == ("12", "7")
    assert set(table.groups()) == {"7", "12"}


# --- bad input: errors ---------------------------------------------------------------------------


def test_empty_file(tmp_path):
    expect_error(write(tmp_path, ""), r"the file is empty \(0 bytes\)")
    expect_error(write(tmp_path, "\n  \n", name="blank.csv"), r"the file is empty \(only whitespace\)")


def test_header_only(tmp_path):
    expect_error(write(tmp_path, "identity,e0,e1\n"), r"has a header \(3 columns\) but no data rows")


def test_no_numeric_columns(tmp_path):
    msg = expect_error(write(tmp_path, "identity,colour\na,red\nb,blue\n"), "no numeric columns")
    assert "'identity', 'colour'" in msg


def test_decimal_comma_gets_a_hint(tmp_path):
    expect_error(write(tmp_path, "identity;e0;e1\na;0,5;1,5\nb;1,0;2,0\n"), "column 'e0' holds text.*decimal comma")
    expect_error(write(tmp_path, "who;u;v\na;0,5;1,5\nb;1,0;2,0\n", name="b.csv"), "no numeric columns.*decimal comma")


def test_duplicate_header_names(tmp_path):
    msg = expect_error(write(tmp_path, "identity,e0,e1,e0\na,1,2,3\n"), "duplicate column names")
    assert "'e0' (columns 2, 4)" in msg


@pytest.mark.parametrize("extra, line, fields", [(",9.0", 5, 5), ("", 5, 3)])
def test_ragged_row_names_its_line(tmp_path, extra, line, fields):
    lines = table_text(d=3).splitlines()
    lines.insert(2, "")  # a blank line still counts in the file's line numbers
    row = lines[4]
    lines[4] = row + extra if extra else row.rsplit(",", 1)[0]
    msg = expect_error(write(tmp_path, "\n".join(lines) + "\n"), f"line {line} has {fields} fields but the header has 4")
    assert "delimiter ','" in msg


def test_several_ragged_rows_are_all_listed(tmp_path):
    text = "identity,e0,e1\na,1,2\na,1\nb,1,2,3\nb,1,2\n"
    expect_error(write(tmp_path, text), r"line 3 has 2 fields.*2 ragged lines in all: lines 3, 4")


def test_embedding_blocks_of_mixed_width(tmp_path):
    header = ["identity", "e0", "e1", "e2", "e3", "f0", "f1"]
    msg = expect_error(write(tmp_path, table_text(header=header, d=6)), "2 embedding column blocks of mixed width")
    assert "e0..e3 (4 columns)" in msg and "f0..f1 (2 columns)" in msg


def test_embedding_block_with_a_gap(tmp_path):
    header = ["identity", "e0", "e1", "e3", "e4"]
    expect_error(write(tmp_path, table_text(header=header, d=4)), r"e0..e4 look like an embedding block but skip e2")


def test_non_numeric_cell_in_an_embedding_column_names_line_and_column(tmp_path):
    text = "identity,e0,e1\na,1,2\na,1,x7\nb,3,1\nb,2,2\n"
    expect_error(write(tmp_path, text), r"line 3, column 'e1': 'x7' is not a number")


def test_no_label_candidate_needs_label_col(tmp_path):
    # a label-named integer column with a different value on every row is a row index, not a label
    msg = expect_error(write(tmp_path, "id,e0,e1\n1,1,0\n2,0,1\n3,1,1\n4,1,2\n"),
                       r"no column to use as the identity label \(integer column 'id' named like a label holds a "
                       r"different value on every row \(a row index")
    assert "--label-col" in msg
    # a label-named column of non-integer numbers is not an identity label
    msg = expect_error(write(tmp_path, "label,e0,e1\n1,1,0\n0.5,0,1\n2,1,1\n2,1,2\n", name="frac.csv"),
                       r"column 'label' named like a label holds numbers that are not integers \('0.5' on line 3\)")
    assert "--label-col" in msg
    msg = expect_error(write(tmp_path, "e0,e1\n1,0\n0,1\n", name="nolabel.csv"), "every column is numeric")
    assert "--label-col" in msg


def test_only_one_identity(tmp_path):
    msg = expect_error(write(tmp_path, table_text(rows=(("solo", 4), ("once", 1)))),
                       r"only 1 identity\(ies\) with >= 2 rows after filtering \('solo'\), plus 1 with a single row")
    assert ">= 2 identities" in msg


def test_every_row_filtered_is_an_error(tmp_path):
    text = "identity,e0,e1\na,nan,1\na,0,0\nb,,1\n"
    expect_error(write(tmp_path, text), r"every one of the 3 rows was dropped.*2 with missing or non-finite.*1 with norm")


def test_different_dimensions_name_both_files(tmp_path):
    a = write(tmp_path, table_text(d=3), name="enc_a.csv")
    b = write(tmp_path, table_text(d=4), name="enc_b.csv")
    with pytest.raises(EmbeddingFileError, match="embedding dimensions differ") as info:
        load_many([a, b])
    assert f"{a} has d = 3" in str(info.value) and f"{b} has d = 4" in str(info.value)
    assert check_same_dimension([load_embeddings(a), load_embeddings(a)]) == 3


def test_undecodable_and_utf16_files(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"identity,e0,e1\nJos\xe9,1,2\n")
    expect_error(path, r"line 2 is not UTF-8 text")
    path16 = tmp_path / "u16.csv"
    path16.write_bytes(table_text().encode("utf-16"))
    expect_error(path16, "UTF-16")


# --- bad input: filters with exact counts ---------------------------------------------------------


def test_missing_nan_inf_and_blank_cells_are_dropped_with_lines(tmp_path):
    text = ("identity,image_id,e0,e1,e2\n"
            "a,i1,1,2,3\n"      # line 2 kept
            "a,i2,NaN,2,3\n"    # line 3 NaN
            "a,i3,1,,3\n"       # line 4 blank
            "a,i4,1,2,4\n"
            "b,i5,inf,1,1\n"    # line 6 inf
            "b,i6,1,NA,-inf\n"  # line 7 NA (2 bad cells)
            "b,i7,1,1,1\n"
            "b,i8,2,1,2\n"
            ",i9,1,1,1\n")      # line 10 missing label
    table = load_embeddings(write(tmp_path, text))
    c = table.counts
    assert (c["rows_read"], c["dropped_nonfinite"], c["dropped_missing_label"], c["rows_kept"]) == (9, 4, 1, 4)
    nonfinite = table.dropped[table.dropped.reason == DROP_NONFINITE]
    assert list(nonfinite.file_line) == [3, 4, 6, 7]
    assert list(nonfinite.image_id) == ["i2", "i3", "i5", "i6"]
    assert nonfinite.detail.iloc[3] == "e1 = nan (+1 more cells)"
    assert list(table.dropped[table.dropped.reason == DROP_LABEL].file_line) == [10]
    summary = table.summary()
    assert "dropped 5 row(s)" in summary and "4 with missing or non-finite embedding value (lines 3, 4, 6, 7)" in summary


def test_zero_norm_rows_are_dropped_and_counted(tmp_path):
    text = "identity,e0,e1\na,0,0\na,1,0\na,1e-7,0\na,2,3\nb,0,1\nb,1,1\nb,0.000002,0.000001\n"
    table = load_embeddings(write(tmp_path, text))
    assert table.counts["dropped_norm"] == 2 and table.counts["rows_kept"] == 5
    assert list(table.dropped.file_line) == [2, 4]
    assert set(table.dropped.reason) == {DROP_NORM}
    assert "2 with norm <= 1e-06 (lines 2, 4)" in table.summary()


def test_single_row_identities_are_left_out_of_groups_and_counted(tmp_path):
    table = load_embeddings(write(tmp_path, table_text(rows=(("a", 3), ("b", 2), ("c", 1), ("d", 1)))))
    assert table.counts["single_row_identities"] == 2 and table.single_row_identities == ("c", "d")
    assert set(table.groups()) == {"a", "b"} and table.identities == ("a", "b")
    assert table.n_rows == 7  # the rows stay in the table
    assert set(table.groups(min_rows=3)) == {"a"}
    assert "2 identity(ies) with a single row excluded from groups(): 'c', 'd'" in table.summary()


def test_from_arrays_applies_the_same_filter():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0], [1.0, 1.0], [2.0, 0.0]])
    table = EmbeddingTable.from_arrays(["a", "a", "b", None, "b"], x)
    assert table.counts["dropped_norm"] == 1 and table.counts["dropped_nonfinite"] == 1
    assert table.counts["dropped_missing_label"] == 1
    assert list(table.dropped.file_line) == [1, 2, 3]
    np.testing.assert_allclose(table.embeddings, [[0.6, 0.8], [1.0, 0.0]])


# --- manifests -----------------------------------------------------------------------------------


def test_manifest_round_trip_and_verification(tmp_path):
    text = table_text(rows=(("a", 3), ("b", 3), ("c", 1))).replace("\nb,", "\nb,", 1)
    path = write(tmp_path, text.replace(text.splitlines()[2], "a,nan,1,1", 1))
    assert sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    table = load_embeddings(path)
    entry = manifest_entry(table, generator="none", encoder="test", seed=np.int64(3), scale=np.float32(0.5))
    assert entry["rows"] == 7 and entry["rows_kept"] == 6 and entry["identities"] == 2 and entry["dim"] == 3
    assert entry["dropped"] == [{"file_line": 3, "reason": DROP_NONFINITE, "detail": "e0 = nan"}]
    assert entry["dropped_counts"]["dropped_nonfinite"] == 1 and entry["single_row_identities"] == 1
    manifest = write_manifest(tmp_path / "manifest.json", {path.name: entry})
    back = read_manifest(manifest)
    assert back[path.name]["sha256"] == table.sha256 and back[path.name]["generation"]["seed"] == 3
    assert json.loads(manifest.read_text())["manifest_version"] == 1
    assert verify_manifest(manifest) == []
    path.write_text(path.read_text() + "c,1,2,3\n")
    assert verify_manifest(manifest) == [f"{path.name}: SHA-256 differs from manifest.json"]


def test_manifest_bad_input(tmp_path):
    with pytest.raises(ValueError, match="mapping file name"):
        write_manifest(tmp_path / "m.json", {"a.csv": 3})
    bad = tmp_path / "bad.json"
    bad.write_text('{"x": 1}')
    with pytest.raises(ValueError, match="not an epsaudit manifest"):
        read_manifest(bad)
    m = write_manifest(tmp_path / "inf.json", {"a.csv": {"value": float("inf"), "nan": float("nan")}})
    assert read_manifest(m)["a.csv"] == {"value": "inf", "nan": None}


def test_duplicate_rows_are_dropped_and_counted(tmp_path):
    # a repeated image id, and an exact copy of a label + embedding under a new id: copies would
    # put development rows into a reserved test set
    text = ("identity,image_id,e0,e1\n"
            "a,i1,1,2\n" "a,i2,2,1\n" "a,i1,5,4\n" "a,i9,1,2\n"
            "b,i3,1,1\n" "b,i4,0,1\n" "b,i5,1,1\n")
    table = load_embeddings(write(tmp_path, text))
    assert table.counts["dropped_duplicate"] == 3 and table.counts["rows_kept"] == 4
    dup = table.dropped[table.dropped.reason == "duplicate of an earlier row"]
    assert list(dup.file_line) == [4, 5, 8]
    assert list(dup.detail) == ["same image id 'i1' as line 2", "exact copy of line 2", "exact copy of line 6"]
    assert "3 with duplicate of an earlier row (lines 4, 5, 8)" in table.summary()
