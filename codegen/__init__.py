"""spmdkit code generator: rules_yaml/*.yaml -> C++ rules and their registration."""
