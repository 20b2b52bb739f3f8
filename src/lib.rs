//! conversation-search: BM25 search over coding-agent transcripts, served over stdio MCP.
