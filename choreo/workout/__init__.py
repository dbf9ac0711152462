"""Workouts: routines a class can follow, planned in 8-counts onto an intensity curve.

:mod:`~choreo.workout.curves` (the profiles' targets), :mod:`~choreo.workout.safety` (which library
phrases a workout may use, and the rules measured on the finished motion),
:mod:`~choreo.workout.moves` (a move's name from its kinematics), :mod:`~choreo.workout.planner`
(the plan and its cue sheet), :mod:`~choreo.workout.sheet` (the routine's measured report).
"""
