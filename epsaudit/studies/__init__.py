"""The book's chapters as studies: one module per chapter, on top of the core library.

A study module holds what only its chapter needs: the experiment (which settings, which tables),
the chapter's run profiles and the papers' reported values it is compared with. The core
(results, bounds, audit routes, mechanisms, DP-Sniper, the operator model, leakage metrics, data
loading) and the data builder (:mod:`epsaudit.build`) know no chapter; no core module imports a study.

- :mod:`~epsaudit.studies.quickstart` -- "Audit a mechanism in ten minutes";
- :mod:`~epsaudit.studies.synthetic` -- chapter 1, the known-epsilon benchmark;
- :mod:`~epsaudit.studies.sniper_duel` -- chapter 2, DP-Sniper against the reserved test;
- :mod:`~epsaudit.studies.face_study` and :mod:`~epsaudit.studies.face_membership` -- chapter 3 and
  its section 3.1, the face case study and the membership adversary;
- :mod:`~epsaudit.studies.cascade` and :mod:`~epsaudit.studies.cascade_measured` -- chapter 4 and its
  section 4.1, the affine operator and the measured cascade;
- :mod:`~epsaudit.studies.resampled_faces` -- chapter 5, certificates on resampled swaps.

Shared by every page: :mod:`~epsaudit.studies.parameters` (typed, checked papermill parameters) and
:mod:`~epsaudit.studies.book` (checked claims, the papers' values, one number format and table style).
A page module holds plumbing only (profiles, loading, caching, parallel dispatch) and returns numbers,
tables and figures; the page's prose and its computation are in the notebook.

Every chapter runs at one of three profiles with the same names: ``smoke`` (minutes, what the
tests run), ``full`` (what the book shows) and ``paper`` (the papers' repetition counts).
"""

from __future__ import annotations

from typing import Any, Mapping

#: The profile names every chapter offers, fastest first.
PROFILE_NAMES: tuple[str, ...] = ("smoke", "full", "paper")


def choose_profile(profiles: Mapping[str, Mapping[str, Any]], name: str, chapter: str) -> dict[str, Any]:
    """The settings of one profile of a chapter.

    Parameters
    ----------
    profiles : mapping profile name -> settings
        A study module's ``PROFILES`` (keys exactly :data:`PROFILE_NAMES`).
    name : str
        The profile asked for (the notebook's ``profile`` parameter).
    chapter : str
        The chapter, for the message.

    Returns
    -------
    dict
        A copy of the profile's settings.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`PROFILE_NAMES`.

    Examples
    --------
    >>> choose_profile({"smoke": {"n": 1}, "full": {"n": 2}, "paper": {"n": 3}}, "full", "demo")
    {'n': 2}
    """
    if set(profiles) != set(PROFILE_NAMES):
        raise ValueError(f"{chapter}: profiles must be exactly {PROFILE_NAMES}, got {sorted(profiles)}")
    if name not in profiles:
        raise ValueError(f"{chapter}: profile must be one of {PROFILE_NAMES}, got {name!r}")
    return dict(profiles[name])
