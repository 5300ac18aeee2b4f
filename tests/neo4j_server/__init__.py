"""A throwaway Neo4j 5.26 server for tests (Java harness + Python launcher) and the pytest fixtures that use it."""
