package io.neusym.testserver;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;
import org.neo4j.io.ByteUnit;

/**
 * A disposable Neo4j Community 5.26 server for NeuSym's tests, started in-process through the official test harness.
 *
 * <p>Usage: {@code java -jar neusym-neo4j-test-server.jar [--port N] [--password P | --no-auth] [--ignore-stdin]}
 *
 * <ul>
 *   <li>Bolt only (no HTTP), bound to 127.0.0.1; {@code --port 0} (the default) lets the OS choose a free port, so
 *       parallel test runs never collide.
 *   <li>Auth is ON with user {@code neo4j} and a fixed test password ({@value #DEFAULT_PASSWORD} unless
 *       {@code --password} says otherwise), because the tests must see a real authentication failure.
 *       {@code --no-auth} turns it off.
 *   <li>When ready it prints exactly one line to stdout, {@code NEO4J_URI=bolt://127.0.0.1:PORT}; everything else
 *       (including stray library output) goes to stderr or to the log files in the working directory.
 *   <li>It stops (and deletes its data directory) when stdin reaches EOF: the launcher holds the other end of a pipe,
 *       so a test run that dies, even by SIGKILL, cannot leave a JVM behind. {@code --ignore-stdin} is for running it
 *       by hand from a shell; then SIGTERM / Ctrl-C stops it.
 * </ul>
 */
public final class Neo4jTestServer {
    static final String DEFAULT_PASSWORD = "neusym-test-password";

    private Neo4jTestServer() {}

    public static void main(String[] args) throws Exception {
        // Keep the real stdout for the one machine-read line; anything else printing to System.out goes to stderr.
        PrintStream handshake = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);

        int port = 0;
        String password = DEFAULT_PASSWORD;
        boolean auth = true;
        boolean watchStdin = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--password" -> password = args[++i];
                case "--no-auth" -> auth = false;
                case "--ignore-stdin" -> watchStdin = false;
                default -> {
                    System.err.println("unknown argument: " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (auth && password.length() < 8) {
            System.err.println("Neo4j requires passwords of at least 8 characters");
            System.exit(2);
        }

        Path workDir = Files.createTempDirectory("neusym-neo4j-");
        Neo4j neo4j;
        try {
            neo4j = Neo4jBuilders.newInProcessBuilder(workDir)
                    .withDisabledServer()
                    .withConfig(BoltConnector.enabled, true)
                    .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                    .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                    // No TLS: skips generating a self-signed certificate at every start.
                    .withConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                    .withConfig(GraphDatabaseSettings.auth_enabled, auth)
                    // Tests try wrong passwords on purpose; the default lock-out (3 failures) would then refuse the
                    // right password to every other test for a few seconds.
                    .withConfig(GraphDatabaseSettings.auth_max_failed_attempts, 0)
                    .withConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(64))
                    // Netty's default 5 s quiet period, paid twice, made every stop take 10 s; nothing here needs it.
                    .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                    .withConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(5))
                    .build();
        } catch (RuntimeException | Error e) {
            System.err.println("Neo4j test server failed to start:");
            e.printStackTrace(System.err);
            System.exit(1);
            return;
        }

        AtomicBoolean stopped = new AtomicBoolean(false);
        CountDownLatch done = new CountDownLatch(1);
        Runnable stop = () -> {
            if (stopped.compareAndSet(false, true)) {
                try {
                    neo4j.close(); // deletes the harness's own folder inside workDir
                    Files.deleteIfExists(workDir);
                } catch (IOException e) {
                    e.printStackTrace(System.err);
                } finally {
                    done.countDown();
                }
            }
        };
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.run();
            try {
                done.await();
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }, "neo4j-test-server-shutdown"));

        if (auth) {
            // The harness creates user neo4j with the well-known initial password and a forced change; replace it
            // with the test password so drivers can log in directly.
            neo4j.databaseManagementService()
                    .database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
                    .executeTransactionally(
                            "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", password));
        }

        URI bolt = neo4j.boltURI();
        handshake.println("NEO4J_URI=bolt://127.0.0.1:" + bolt.getPort());
        handshake.flush();

        if (watchStdin) {
            try {
                byte[] buf = new byte[256];
                while (System.in.read(buf) != -1) {
                    // The launcher never writes; anything it sends is ignored. EOF means it went away.
                }
            } catch (IOException ignored) {
                // A broken stdin is as good as EOF.
            }
            stop.run();
            System.exit(0);
        } else {
            done.await();
        }
    }
}
