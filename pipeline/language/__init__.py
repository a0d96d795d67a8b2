"""How tools, results and people speak: words for tools, values in prose, entities and fields in results,
SQL text, argument values, the offline request and reply writers, off-topic requests and the LLM teacher."""
