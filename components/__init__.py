"""Pulumi components of the stack, and the plain objects they are built from."""
