"""Calibrate the energy estimate (choreo/models/energy.py) on the Compendium rows in the repository.

Usage::

    .venv/bin/python -P bench/met_calibration.py [--library FILE] [--out FILE]

Measures the median motion energy (mean squared joint speed, m^2/s^2) of the
library's original 8-beat standing phrases (no floor work, inversion or head
below the hips), those with a foot on the floor in every frame and those with a
flight phase (the workout's rules, ``choreo.workout.safety``), puts them on the
compendium's low- and high-impact aerobics with standing quietly as the
intercept, and writes the fit with the anchors and the checks (each style's
median phrase against its compendium row) into the calibration file
(default: choreo/models/energy_calibration.json).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import numpy as np

from choreo.choreography.library import shipped_library
from choreo.models.energy import CALIBRATION_PATH, COMPENDIUM_PATH
from choreo.workout.safety import screen_phrases

CHECKS = {"salsa": "03025", "modern": "03010", "breakdance": "03031"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=CALIBRATION_PATH)
    args = parser.parse_args()
    rows = {
        r["code"]: r
        for r in csv.DictReader(
            (line for line in COMPENDIUM_PATH.read_text().splitlines() if not line.startswith("#")),
            delimiter="\t",
        )
    }
    lib = shipped_library(args.library)
    phrases = np.nonzero((lib.phrase_beats == 8) & ~lib.phrase_mirrored)[0]
    reasons = screen_phrases(lib, phrases, impact="low")
    floor = np.array([bool({"floor work", "inversion", "head below hips"} & set(r)) for r in reasons])
    flight = np.array(["flight" in r for r in reasons])
    energy = lib.phrase_energy[phrases].astype(np.float64)
    e_low, e_high = float(np.median(energy[~floor & ~flight])), float(np.median(energy[~floor & flight]))
    rest, low, high = (float(rows[c]["met"]) for c in ("07040", "03020", "03021"))
    exponent = math.log((high - rest) / (low - rest)) / math.log(e_high / e_low)
    k = (low - rest) / e_low**exponent

    def met(e: float) -> float:
        return rest + k * e**exponent

    checks = []
    for style, code in CHECKS.items():
        if style in lib.styles:
            e = float(np.median(energy[lib.phrase_style[phrases] == lib.styles.index(style)]))
            checks.append(
                {
                    "material": f"{style}, median 8-beat phrase",
                    "energy_m2_s2": round(e, 4),
                    "met": round(met(e), 2),
                    "code": code,
                    "compendium_met": float(rows[code]["met"]),
                    "activity": rows[code]["activity"],
                }
            )
    out = {
        "version": f"compendium-2011/{lib.sha256[:12]}",
        "form": "met = rest_met + k * energy_m2_s2 ** exponent",
        "rest_met": rest,
        "k": round(k, 6),
        "exponent": round(exponent, 6),
        "edition": "2011 Compendium of Physical Activities (Ainsworth et al., Med Sci Sports Exerc 43(8))",
        "library_sha256": lib.sha256,
        "anchors": [
            {"code": "07040", "met": rest, "energy_m2_s2": 0.0, "material": "standing still"},
            {
                "code": "03020",
                "met": low,
                "energy_m2_s2": round(e_low, 4),
                "material": f"median of {int((~floor & ~flight).sum())} low-impact standing phrases",
            },
            {
                "code": "03021",
                "met": high,
                "energy_m2_s2": round(e_high, 4),
                "material": f"median of {int((~floor & flight).sum())} standing phrases with a flight",
            },
        ],
        "checks": checks,
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
