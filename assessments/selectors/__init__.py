"""Read queries: what pages, the API and commands show (no writes). One module per concern."""
