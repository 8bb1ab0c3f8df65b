"""The shared HTTP platform of every surface: envelope, errors, request ids, body limits,
throttling, CORS, negotiation, authentication and workspace resolution."""
