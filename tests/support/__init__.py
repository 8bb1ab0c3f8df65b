"""Helpers every test folder shares: the envelope checks, the sql / ok / fails fixtures, polling."""
