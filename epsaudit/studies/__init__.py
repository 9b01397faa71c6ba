"""The book's chapters as studies: one module per page, on top of the core library, which knows no chapter.

A page module holds plumbing only (profiles, parameters, loading, caching, parallel dispatch, figures) and returns
numbers, tables and figures; the page's prose and computation are in its notebook: :mod:`~epsaudit.studies.quickstart`
(ten minutes), :mod:`~epsaudit.studies.synthetic` (chapter 1), :mod:`~epsaudit.studies.sniper_duel` (2),
:mod:`~epsaudit.studies.face_study` and :mod:`~epsaudit.studies.face_membership` (3, 3.1),
:mod:`~epsaudit.studies.cascade` and :mod:`~epsaudit.studies.cascade_measured` (4, 4.1),
:mod:`~epsaudit.studies.resampled_faces` (5). Shared: :mod:`~epsaudit.studies.parameters` (checked papermill parameters)
and :mod:`~epsaudit.studies.book` (checked claims, the papers' values, number and table style).

Every chapter runs at ``smoke`` (minutes, what the tests run), ``full`` (the book) or ``paper`` (the
papers' repetition counts).
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
    name, chapter : str
        The profile asked for; the chapter, for the message.

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
