// ParleySimulation module. See README.md for the module map.
@_exported import ParleyCore
