"""The synthesis library: pure stages and records. Reaches servers only through MCP; never imports dagster."""
