"""Thresholds that turn a similarity into a grade, fitted to human labels (the local machine judge's calibration).

Pure, no Django import. The local judge scores a document by the cosine similarity of its embedding to the
topic's, so its grades can only rise with similarity: the fit is the monotone step function (one threshold per
grade above the lowest) that gives the most human labels back exactly. Dynamic programming over the documents in
order of similarity finds it in O(n · grades); documents of equal similarity get one grade, as any threshold would
give them.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

Cut = tuple[float | None, int]  # (similarity at or above which, grade); None: the grade is never given


def calibrate(pairs: Sequence[tuple[float, int]], grades: Sequence[int]) -> list[Cut]:
    """The thresholds that reproduce the most of ``pairs`` (similarity, human grade); ``grades`` in ascending order.
    A grade no document earns gets no threshold (None: it is never given); one every document earns starts at the
    lowest similarity seen. Thresholds are finite, so they keep as JSON."""
    if not pairs:
        raise ValueError("calibration needs judged documents: judge some topics first")
    order = sorted(grades)
    index = {g: i for i, g in enumerate(order)}
    # One group per distinct similarity: how many documents of each grade it holds.
    groups: list[tuple[float, list[int]]] = []
    for similarity, members in groupby(sorted(pairs), key=lambda p: p[0]):
        counts = [0] * len(order)
        for _, grade in members:
            counts[index[grade]] += 1
        groups.append((similarity, counts))
    k = len(order)
    # best[g]: most matches over the groups so far with the last one graded g (grades never fall along the order).
    best = [0] * k
    choices: list[list[int]] = []  # per group and grade: the previous group's grade on the best path
    for _, counts in groups:
        running, arg, new, back = -1, 0, [0] * k, [0] * k
        for g in range(k):
            if best[g] > running:
                running, arg = best[g], g
            new[g], back[g] = running + counts[g], arg
        best = new
        choices.append(back)
    grade = max(range(k), key=lambda g: (best[g], -g))
    path = []
    for back in reversed(choices):
        path.append(grade)
        grade = back[grade]
    path.reverse()
    cuts: list[Cut] = []
    for g in range(1, k):
        at = next((i for i, assigned in enumerate(path) if assigned >= g), None)
        if at is None:
            cuts.append((None, order[g]))
        elif at == 0:
            cuts.append((groups[0][0], order[g]))
        else:  # halfway between the last group below and the first at or above
            cuts.append(((groups[at - 1][0] + groups[at][0]) / 2, order[g]))
    return cuts


def grade_of(similarity: float, cuts: Sequence[Cut], lowest: int) -> int:
    """The grade the thresholds give a similarity: the highest whose threshold it reaches, else ``lowest``."""
    grade = lowest
    for threshold, value in cuts:
        if threshold is not None and similarity >= threshold:
            grade = value
    return grade
