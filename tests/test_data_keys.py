"""Embedding-table loader: the keys rows are grouped and matched by.

Duplicates are found on the L2-normalised row (exact, rescaled and rounded copies), missing image
ids never match each other, an image under two labels is dropped and reported, labels are
normalised (whitespace, Unicode NFC, integer spelling) before grouping, integer label columns are
detected, and :meth:`EmbeddingTable.from_arrays` applies exactly the rules of the CSV path.
Every input is generated here (``tmp_path``)."""

import re
import unicodedata

import numpy as np
import pandas as pd
import pytest

from epsaudit.data import (
    DROP_CONFLICT,
    DROP_DUPLICATE,
    DROP_LABEL,
    EmbeddingFileError,
    EmbeddingTable,
    load_embeddings,
    manifest_entry,
    write_embeddings,
)
from epsaudit.validation import ROW_TOLERANCE as DUPLICATE_TOLERANCE

NFC = "Jos\u00e9"
NFD = unicodedata.normalize("NFD", NFC)


def write_rows(tmp_path, rows, *, d, image_ids=True, name="emb.csv", label_col="identity", fmt=repr):
    """rows = [(label, image_id, vector)], written with ``fmt`` per value; returns the path."""
    header = [label_col] + (["image_id"] if image_ids else []) + [f"e{j}" for j in range(d)]
    lines = [",".join(header)]
    for label, image_id, vec in rows:
        cells = [label] + ([image_id] if image_ids else []) + [fmt(float(v)) for v in vec]
        lines.append(",".join(cells))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    return path


def dropped_of(table, reason):
    return table.dropped[table.dropped.reason == reason]


# --- duplicates on the normalised vector ------------------------------------------------------


def test_scaled_copies_case_drops_30_of_60(tmp_path):
    # 3 identities x 10 embeddings, each written twice: as is and multiplied by 2
    rng = np.random.default_rng(7)
    rows = []
    for k, label in enumerate(["id_a", "id_b", "id_c"]):
        for v in rng.normal(size=(10, 6)) + k:
            rows += [(label, None, v), (label, None, 2 * v)]
    table = load_embeddings(write_rows(tmp_path, rows, d=6, image_ids=False))
    c = table.counts
    assert (c["rows_read"], c["dropped_duplicate"], c["dropped_label_conflict"], c["rows_kept"]) == (60, 30, 0, 30)
    dup = dropped_of(table, DROP_DUPLICATE)
    assert list(dup.file_line) == list(range(3, 62, 2))
    assert list(dup.detail) == [f"rescaled copy (x2) of line {line - 1}" for line in range(3, 62, 2)]
    assert table.identities == ("id_a", "id_b", "id_c") and table.n_rows == 30
    assert "30 with duplicate of an earlier row (lines 3, 5, 7" in table.summary()


@pytest.mark.parametrize("scale, shown", [(3.0, "x3"), (0.1, "x0.1"), (1 / 7, "x0.142857")])
def test_copies_scaled_by_ratios_that_are_not_exact_are_duplicates(tmp_path, scale, shown):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(8, 128))
    rows = [("a" if i < 4 else "b", f"img{i}", v) for i, v in enumerate(x)]
    rows += [("a", "copy0", x[0] * scale), ("b", "copy6", x[6] * scale)]  # lines 10, 11
    table = load_embeddings(write_rows(tmp_path, rows, d=128))
    assert table.counts["dropped_duplicate"] == 2 and table.n_rows == 8
    dup = dropped_of(table, DROP_DUPLICATE)
    assert list(dup.file_line) == [10, 11]
    assert list(dup.detail) == [f"rescaled copy ({shown}) of line 2", f"rescaled copy ({shown}) of line 8"]


@pytest.mark.parametrize("fmt", [lambda v: repr(float(np.float32(v))), lambda v: f"{v:.7g}"],
                         ids=["float32", "7-digits"])
def test_rounded_copies_are_duplicates(tmp_path, fmt):
    # the copy went through float32 (or %.7g, what write_embeddings writes): its normalised row
    # differs from the original by ~1e-7, so the 2**-24 key alone often misses it
    rng = np.random.default_rng(5)
    x = rng.normal(size=(10, 128))
    rows = [("a" if i < 5 else "b", f"img{i}", v) for i, v in enumerate(x)]
    path = write_rows(tmp_path, rows, d=128)
    with open(path, "a", encoding="utf-8") as fh:
        for i in range(10):
            fh.write(",".join(["a" if i < 5 else "b", f"again{i}"] + [fmt(v) for v in x[i]]) + "\n")
    table = load_embeddings(path)
    c = table.counts
    assert (c["rows_read"], c["dropped_duplicate"], c["rows_kept"]) == (20, 10, 10)
    dup = dropped_of(table, DROP_DUPLICATE)
    assert list(dup.file_line) == list(range(12, 22))
    pattern = re.compile(r"(rounded copy \(distance \d\.\de-0[78] after L2-normalisation\)"
                         r"|copy equal after L2-normalisation) of line (\d+)")
    matches = [pattern.fullmatch(d) for d in dup.detail]
    assert all(matches) and [int(m.group(2)) for m in matches] == list(range(2, 12))
    assert sum(d.startswith("rounded copy") for d in dup.detail) >= 8  # the tolerance does the work


def test_near_but_distinct_rows_are_kept(tmp_path):
    assert DUPLICATE_TOLERANCE == 2.0 ** -19
    base = np.array([0.6, 0.8, 0.0])
    rows = [("a", "i1", base), ("a", "i2", base + [0, 0, 1e-5]),  # distance 1e-5: a different row
            ("a", "i3", base + [0, 0, 1e-7]),  # distance 1e-7: the same row, rounded
            ("b", "i4", [1.0, 0, 0]), ("b", "i5", [0, 1.0, 0])]
    table = load_embeddings(write_rows(tmp_path, rows, d=3))
    assert table.counts["dropped_duplicate"] == 1 and table.n_rows == 4
    assert dropped_of(table, DROP_DUPLICATE).detail.tolist() == [
        "rounded copy (distance 1.0e-07 after L2-normalisation) of line 2"]


def test_exact_copy_and_chains_name_the_kept_line(tmp_path):
    v, w = [1.0, 2.0, 0.5], [0.3, -1.0, 2.0]
    rows = [("a", "x", v), ("a", "y", v),  # line 3: exact copy of line 2
            ("a", "y", [9.0, 1.0, 1.0]),  # line 4: same id as line 3, which copies line 2
            ("a", "u", [0.0, 1.0, 1.0]), ("b", "z", w), ("b", "w", [2.0, 2.0, -1.0])]
    table = load_embeddings(write_rows(tmp_path, rows, d=3))
    dup = dropped_of(table, DROP_DUPLICATE)
    assert list(dup.file_line) == [3, 4]
    assert list(dup.detail) == ["exact copy of line 2", "same image id 'y' as line 3; same image as kept line 2"]


# --- images under several labels --------------------------------------------------------------


def test_same_embedding_under_two_labels_is_dropped_and_reported(tmp_path):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(9, 8))
    rows = [(lab, f"i{i}", v) for i, (lab, v) in enumerate(zip("aaabbbccc", x))]
    rows.append(("b", "i99", 3 * x[1]))  # line 11: line 3's image, filed under 'b'
    table = load_embeddings(write_rows(tmp_path, rows, d=8))
    c = table.counts
    assert (c["dropped_label_conflict"], c["dropped_duplicate"], c["rows_kept"]) == (2, 0, 8)
    conflict = dropped_of(table, DROP_CONFLICT)
    assert list(conflict.file_line) == [3, 11] and list(conflict.label) == ["a", "b"]
    assert list(conflict.detail) == [
        "one image under labels 'a', 'b' (lines 3, 11): line 11 is a rescaled copy (x3) of this row (label 'b')",
        "one image under labels 'a', 'b' (lines 3, 11): rescaled copy (x3) of line 3 (label 'a')"]
    note = ("1 image(s) found under more than one label (same image id, or same embedding after "
            "L2-normalisation): all 2 of their rows dropped as 'same image under another label': "
            "'a', 'b' (lines 3, 11)")
    assert note in table.notes
    summary = table.summary()
    assert note in summary and "2 with same image under another label (lines 3, 11)" in summary
    assert table.rows_per_identity().to_dict() == {"a": 2, "b": 3, "c": 3}


def test_same_image_id_under_two_labels_is_a_conflict_with_a_hint(tmp_path):
    rng = np.random.default_rng(12)
    x = rng.normal(size=(6, 4))
    rows = [("a", "p1", x[0]), ("a", "p2", x[1]), ("a", "p3", x[2]),
            ("b", "p4", x[3]), ("b", "p5", x[4]), ("b", "p1", x[5])]
    table = load_embeddings(write_rows(tmp_path, rows, d=4))
    assert table.counts["dropped_label_conflict"] == 2 and table.n_rows == 4
    assert list(dropped_of(table, DROP_CONFLICT).detail) == [
        "one image under labels 'a', 'b' (lines 2, 7): line 7 has the same image id 'p1' (label 'b')",
        "one image under labels 'a', 'b' (lines 2, 7): same image id 'p1' as line 2 (label 'a')"]
    assert any(n.startswith("1 of them share only an image id (different embeddings)") for n in table.notes)


# --- missing image ids never match ------------------------------------------------------------


def blank_id_rows(seed=0):
    """3 identities x 8 distinct rows; image_id only on the first two rows of each identity."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, label in enumerate(["id_a", "id_b", "id_c"]):
        for j, v in enumerate(rng.normal(size=(8, 6)) + k):
            rows.append((label, f"{label}_{j:04d}.jpg" if j < 2 else "", v))
    return rows


def test_blank_image_ids_case_keeps_all_24_rows(tmp_path):
    table = load_embeddings(write_rows(tmp_path, blank_id_rows(), d=6, fmt=lambda v: f"{v:.6f}"))
    c = table.counts
    assert (c["rows_read"], c["dropped_duplicate"], c["rows_kept"], c["image_ids_missing"]) == (24, 0, 24, 18)
    assert len(table.dropped) == 0 and table.identities == ("id_a", "id_b", "id_c")
    assert sum(table.image_ids == "") == 18
    assert ("image id missing on 18 row(s) (lines 4, 5, 6, 7, 8, ... (18 in all)): those rows are matched by "
            "embedding only (missing ids never equal each other)") in table.notes


def test_missing_tokens_never_match_but_real_duplicate_ids_are_still_dropped(tmp_path):
    rows = blank_id_rows(seed=1)
    tokens = ["NA", "none", " ", "n/a", "NULL", "nan"]
    rows = [(lab, tokens[i % len(tokens)] if not iid else iid, v) for i, (lab, iid, v) in enumerate(rows)]
    rng = np.random.default_rng(99)
    rows += [("id_a", "id_a_0001.jpg", rng.normal(size=6)),  # line 26: repeats line 3's id
             ("id_c", " id_c_0000.jpg ", rng.normal(size=6))]  # line 27: repeats line 18's id, padded
    table = load_embeddings(write_rows(tmp_path, rows, d=6))
    c = table.counts
    assert (c["rows_read"], c["dropped_duplicate"], c["rows_kept"]) == (26, 2, 24)
    assert (c["image_ids_missing"], c["image_ids_normalised"]) == (18, 1)
    dup = dropped_of(table, DROP_DUPLICATE)
    assert list(dup.file_line) == [26, 27]
    assert list(dup.detail) == ["same image id 'id_a_0001.jpg' as line 3", "same image id 'id_c_0000.jpg' as line 18"]


# --- labels -----------------------------------------------------------------------------------


def test_labels_equal_after_whitespace_and_nfc_are_one_identity(tmp_path):
    rng = np.random.default_rng(2)
    labels = [NFC, NFC, NFD, NFD, NFD, "Ann ", "Ann", " Ann", "ann", "Bob", "Bob"]
    rows = [(lab, f"i{i}", v) for i, (lab, v) in enumerate(zip(labels, rng.normal(size=(len(labels), 4))))]
    table = load_embeddings(write_rows(tmp_path, rows, d=4))
    assert table.identities == ("Ann", "Bob", NFC) and table.single_row_identities == ("ann",)
    assert table.rows_per_identity().to_dict() == {"Ann": 3, "Bob": 2, NFC: 5, "ann": 1}
    assert all(unicodedata.is_normalized("NFC", lab) for lab in table.labels)
    c = table.counts
    assert (c["labels_normalised"], c["label_collisions"], c["rows_kept"]) == (5, 2, 11)
    note = next(n for n in table.notes if n.startswith("2 label(s) written in several ways"))
    assert (f"{NFC!r} = {NFC!r} (2 row(s), lines 2, 3) + {NFD!r} [NFD] (3 row(s), lines 4, 5, 6)" in note
            and "'Ann' = 'Ann ' [surrounding whitespace] (1 row(s), line 7) + 'Ann' (1 row(s), line 8) + "
                "' Ann' [surrounding whitespace] (1 row(s), line 9)" in note)
    assert "5 row(s) with a label changed by normalisation (lines 4, 5, 6, 7, 9)" in table.notes
    assert "labels differing only in letter case stay different identities: 'Ann' / 'ann'" in table.notes
    assert "keys: labels_normalised = 5, label_collisions = 2, image_ids_missing = 0" in table.summary()


def test_missing_value_tokens_in_the_label_column_drop_the_row(tmp_path):
    rng = np.random.default_rng(4)
    labels = ["a", "a", "NA", "b", "b", " null ", "None", ""]
    rows = [(lab, f"i{i}", v) for i, (lab, v) in enumerate(zip(labels, rng.normal(size=(8, 3))))]
    table = load_embeddings(write_rows(tmp_path, rows, d=3))
    assert table.counts["dropped_missing_label"] == 4 and table.identities == ("a", "b")
    missing = dropped_of(table, DROP_LABEL)
    assert list(missing.file_line) == [4, 7, 8, 9]
    assert list(missing.detail) == ["label 'NA' is a missing-value token", "label 'null' is a missing-value token",
                                    "label 'None' is a missing-value token", "no label (blank cell, None or NaN)"]


def test_integer_label_column_is_detected_and_read_as_text(tmp_path):
    # CelebA's identity file: image_id, identity (integers)
    rng = np.random.default_rng(6)
    labels = ["2880", "2880", "2880.0", "17", "017", "+17", "17"]
    rows = [(lab, f"{i:06d}.jpg", v) for i, (lab, v) in enumerate(zip(labels, rng.normal(size=(7, 3))))]
    table = load_embeddings(write_rows(tmp_path, rows, d=3))
    assert table.label_col == "identity" and table.identities == ("17", "2880")
    assert table.rows_per_identity().to_dict() == {"17": 4, "2880": 3}
    assert table.embedding_cols == ("e0", "e1", "e2")
    assert table.notes[0] == "label column 'identity' (name match; holds integers, read as text labels)"
    assert "labels are integers: each is read as text in plain decimal ('7' for 7, 007, +7 or 7.0)" in table.notes
    c = table.counts
    assert (c["labels_normalised"], c["label_collisions"]) == (3, 2)
    assert list(table.image_ids[:2]) == ["000000.jpg", "000001.jpg"]  # number-like ids stay text


def test_text_label_column_is_preferred_over_an_integer_one(tmp_path):
    rng = np.random.default_rng(8)
    lines = ["person_id,name,e0,e1,e2"]
    for i, v in enumerate(rng.normal(size=(6, 3))):
        lines.append(f"{i // 3},{'AB'[i // 3]}," + ",".join(repr(float(a)) for a in v))
    path = tmp_path / "both.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = load_embeddings(path)
    assert table.label_col == "name" and table.identities == ("A", "B")
    assert ("integer column(s) 'person_id' named like a label not used as label: the text column 'name' is "
            "preferred") in table.notes
    assert table.embedding_cols == ("e0", "e1", "e2")


def test_integer_label_column_is_preferred_over_an_unnamed_text_column(tmp_path):
    rng = np.random.default_rng(9)
    lines = ["generator,Subject ID,quality,alpha,beta"]  # no e0.. block: the fallback takes numeric columns
    for i, v in enumerate(rng.normal(size=(6, 2))):
        lines.append(f"swap,{i // 3 + 1},{0.5 + i / 10},{float(v[0])!r},{float(v[1])!r}")
    path = tmp_path / "subj.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = load_embeddings(path)
    assert table.label_col == "Subject ID" and table.identities == ("1", "2")
    assert ("text column(s) 'generator' not used as label: a column named like a label is preferred (pass "
            "--label-col to choose another)") in table.notes
    assert table.embedding_cols == ("quality", "alpha", "beta")  # never the label column


def test_non_integer_numbers_given_as_labels_keep_their_text(tmp_path):
    text = "score,e0,e1\n0.5,1,0\n0.50,0,1\n0.5,1,1\n0.50,1,2\n"
    path = tmp_path / "score.csv"
    path.write_text(text, encoding="utf-8")
    table = load_embeddings(path, label_col="score")
    assert table.identities == ("0.5", "0.50")
    assert ("label column 'score' holds numbers that are not all integers: each text is one label as written "
            "('0.5' and '0.50' are different labels)") in table.notes


def test_column_names_are_matched_in_nfc(tmp_path):
    rng = np.random.default_rng(10)
    header = unicodedata.normalize("NFD", "identité")
    lines = [f"{header},e0,e1"] + [f"{'ab'[i // 2]}," + ",".join(repr(float(a)) for a in v)
                                    for i, v in enumerate(rng.normal(size=(4, 2)))]
    path = tmp_path / "nfd_header.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = load_embeddings(path, label_col="identité")
    assert table.label_col == "identité" and table.identities == ("a", "b")
    dup = tmp_path / "dup_header.csv"
    dup.write_text(f"identity,{header},identité,e0,e1\na,b,c,1,2\n", encoding="utf-8")
    with pytest.raises(EmbeddingFileError, match=r"duplicate column names in the header: 'identité' \(columns 2, 3\)"):
        load_embeddings(dup)


# --- the arrays path ---------------------------------------------------------------------------


def messy_inputs():
    rng = np.random.default_rng(21)
    x = rng.normal(size=(14, 5))
    x[3] = 2.5 * x[0]  # rescaled copy, same label
    x[9] = 0.1 * x[1]  # same image, other label
    x[12] = np.nan
    labels = ["a", "a", NFD, "a ", None, NFC, "NA", NFC, "b", "b", "b", " b", "b", "b"]
    ids = ["p0", "p1", None, "p3", "p4", "", "p6", "p7", "p8", "p9", " p8", "none", "p12", np.nan]
    return labels, x, ids


def test_from_arrays_applies_exactly_the_csv_rules(tmp_path):
    labels, x, ids = messy_inputs()
    arrays = EmbeddingTable.from_arrays(labels, x, ids)
    rows = [("" if lab is None else lab, "" if not isinstance(i, str) else i, v) for lab, i, v in zip(labels, ids, x)]
    loaded = load_embeddings(write_rows(tmp_path, rows, d=5))
    assert arrays.counts == loaded.counts
    assert arrays.counts == {"rows_read": 14, "dropped_missing_label": 2, "dropped_nonfinite": 1,
                             "dropped_norm": 0, "dropped_duplicate": 2, "dropped_label_conflict": 2,
                             "rows_kept": 7, "identities": 2, "single_row_identities": 1, "dim": 5,
                             "labels_normalised": 3, "label_collisions": 3, "image_ids_missing": 4,
                             "image_ids_normalised": 1}
    assert list(arrays.labels) == list(loaded.labels) == ["a", NFC, NFC, NFC, "b", "b", "b"]
    assert list(arrays.image_ids) == list(loaded.image_ids)
    np.testing.assert_array_equal(arrays.embeddings, loaded.embeddings)
    cols = ["label", "image_id", "reason"]
    pd.testing.assert_frame_equal(arrays.dropped[cols], loaded.dropped[cols])
    assert list(arrays.dropped.file_line + 2) == list(loaded.dropped.file_line)
    assert list(arrays.dropped.file_line) == [1, 3, 4, 6, 9, 10, 12]
    assert list(arrays.dropped.reason) == [DROP_CONFLICT, DROP_DUPLICATE, DROP_LABEL, DROP_LABEL, DROP_CONFLICT,
                                           DROP_DUPLICATE, "missing or non-finite embedding value"]
    assert list(arrays.dropped.detail[arrays.dropped.reason == DROP_DUPLICATE]) == [
        "rescaled copy (x2.5) of line 0", "same image id 'p8' as line 8"]


def test_from_arrays_integer_labels_match_the_csv_path(tmp_path):
    x = np.random.default_rng(22).normal(size=(6, 3))
    table = EmbeddingTable.from_arrays([7, np.int64(7), 7.0, 12, "012", np.float64(12)], x)
    assert table.identities == ("12", "7") and table.counts["label_collisions"] == 2
    assert "labels are integers: each is read as text in plain decimal ('7' for 7, 007, +7 or 7.0)" in table.notes
    with pytest.raises(ValueError, match="3 image ids for 6 embedding rows"):
        EmbeddingTable.from_arrays(["a"] * 6, x, ["i"] * 3)


# --- writing, manifests ------------------------------------------------------------------------


def test_write_embeddings_refuses_missing_tokens_and_writes_missing_ids_blank(tmp_path):
    with pytest.raises(ValueError, match=r"labels: row 1 has a missing or blank label \('NA'; 1 in all\)"):
        write_embeddings(tmp_path / "x.csv", ["a", "NA"], None, np.eye(2))
    path = write_embeddings(tmp_path / "ids.csv", ["a", "a", "b", "b"], ["p0", None, np.nan, "p3"],
                            np.eye(4) + 0.1)
    assert path.read_text().splitlines()[2].startswith("a,,")
    table = load_embeddings(path)
    assert table.counts["image_ids_missing"] == 2 and table.counts["dropped_duplicate"] == 0


def test_manifest_entry_reports_every_count(tmp_path):
    rows = [("a ", "p1", [1.0, 0, 0]), ("a", "", [0, 1.0, 0]), ("a", "", [0, 2.0, 0]),
            ("b", "p2", [0, 0, 1.0]), ("b", "p3", [1.0, 1.0, 0]), ("c", "p4", [1.0, 0, 1.0]),
            ("d", "p5", [1.0, 0, 1.0])]
    table = load_embeddings(write_rows(tmp_path, rows, d=3))
    entry = manifest_entry(table)
    assert entry["dropped_counts"] == {"dropped_missing_label": 0, "dropped_nonfinite": 0, "dropped_norm": 0,
                                       "dropped_duplicate": 1, "dropped_label_conflict": 2}
    assert entry["key_counts"] == {"labels_normalised": 1, "label_collisions": 1, "image_ids_missing": 2,
                                   "image_ids_normalised": 0}
    assert entry["rows_kept"] == 4 and entry["image_col"] == "image_id" and entry["notes"] == list(table.notes)
    assert [d["reason"] for d in entry["dropped"]] == [DROP_DUPLICATE, DROP_CONFLICT, DROP_CONFLICT]
