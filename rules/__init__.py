"""mllint's rules, one module per rule (installed as the package `mllint.rules`)."""
