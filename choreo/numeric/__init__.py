"""Small numerical routines the render path needs, written here so a cold ``choreo render`` does not
import ``scipy.signal`` (about half a second of CPU on this machine) for a filter design, a
forward-backward filter and a peak picker."""
