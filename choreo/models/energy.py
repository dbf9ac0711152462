"""The energy estimate: a MET value from the motion, kilocalories from the MET, levels from the MET.

The motion's energy is the mean squared joint speed (m^2/s^2, what ``choreo eval``
reports as ``energy``). It becomes a MET value by
``met = rest + k * energy ** a``, calibrated on the Compendium of Physical
Activities (2011 edition, ``compendium_2011.tsv``): ``rest`` is standing quietly
(07040), and ``k`` and ``a`` put the median energy of the shipped library's
low-impact 8-beat phrases (a foot always on the floor) on aerobic, low impact
(03020) and that of its phrases with a flight phase on aerobic, high impact
(03021). ``bench/met_calibration.py`` measures those medians and writes
``energy_calibration.json``; the other rows of the table are checks it reports.
This is a calibration of dance mocap onto activity classes, not a measurement of
oxygen uptake: a MET here says which compendium class the motion is as vigorous as.

Kilocalories per minute are ``met * 3.5 * mass_kg / 200`` (the compendium's
conversion, 1 MET = 3.5 ml O2/kg/min, 5 kcal per litre of O2); the levels are
the compendium's: light under 3 MET, moderate 3 to 6, vigorous from 6.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from choreo.errors import ParameterError

__all__ = [
    "CALIBRATION_PATH",
    "COMPENDIUM_PATH",
    "DEFAULT_BODY_MASS_KG",
    "INTENSITY_LEVELS",
    "EnergyCalibration",
    "energy_calibration",
    "intensity_level",
    "kcal_per_min",
]

COMPENDIUM_PATH = Path(__file__).resolve().parent / "compendium_2011.tsv"
CALIBRATION_PATH = Path(__file__).resolve().parent / "energy_calibration.json"
DEFAULT_BODY_MASS_KG = 70.0
INTENSITY_LEVELS = ("light", "moderate", "vigorous")
_MODERATE_FROM_MET, _VIGOROUS_FROM_MET = 3.0, 6.0


@dataclass(frozen=True)
class EnergyCalibration:
    """``met = rest_met + k * energy ** exponent``; ``version`` names it in every estimate."""

    rest_met: float
    k: float
    exponent: float
    version: str

    def met(self, energy_m2_s2: float) -> float:
        """The MET value of a motion whose mean squared joint speed is ``energy_m2_s2``."""
        if not energy_m2_s2 >= 0:
            raise ParameterError(f"a motion's energy is >= 0 m^2/s^2, got {energy_m2_s2}")
        return self.rest_met + self.k * energy_m2_s2**self.exponent


@lru_cache(maxsize=4)
def energy_calibration(path: Path = CALIBRATION_PATH) -> EnergyCalibration:
    """The calibration in ``path`` (default: the shipped one)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return EnergyCalibration(
        rest_met=float(data["rest_met"]),
        k=float(data["k"]),
        exponent=float(data["exponent"]),
        version=str(data["version"]),
    )


def kcal_per_min(met: float, body_mass_kg: float = DEFAULT_BODY_MASS_KG) -> float:
    """Kilocalories a minute at ``met`` for a body of ``body_mass_kg``."""
    if not 20.0 <= body_mass_kg <= 300.0:
        raise ParameterError(f"body mass must be 20 to 300 kg, got {body_mass_kg}")
    return met * 3.5 * body_mass_kg / 200.0


def intensity_level(met: float) -> str:
    """``light``, ``moderate`` or ``vigorous`` (the compendium's bounds: 3 and 6 MET)."""
    if met < _MODERATE_FROM_MET:
        return "light"
    return "moderate" if met < _VIGOROUS_FROM_MET else "vigorous"
