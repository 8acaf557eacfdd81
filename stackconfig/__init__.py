"""The typed, validated configuration of a stack (`Pulumi.<stack>.yaml`)."""
