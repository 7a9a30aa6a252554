import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs keytool commands one after the other in one JVM, for scripts/secure-zookeeper.sh: its TLS
 * material takes 36 keytool commands, each a JVM start of its own when run as {@code keytool}
 * (two to eight seconds each on a busy two-core machine, against a fraction of a second of work).
 * <pre>
 * java --add-exports java.base/sun.security.tools.keytool=ALL-UNNAMED scripts/KeytoolBatch.java FILE
 * </pre>
 * FILE holds the commands in order, each argument on a line of its own and an empty line after
 * each command. Each command is printed as a line {@code keytool <arguments>}, then run by the
 * JDK's keytool ({@code sun.security.tools.keytool.Main}, the class that the {@code keytool}
 * launcher runs) with the same arguments, which prints what it prints there. The first command
 * that fails ends the JVM with keytool's exit code (keytool's {@code main} exits so); the commands
 * after it do not run.
 */
class KeytoolBatch {

	public static void main(String[] args) throws Exception {
		if (args.length != 1) {
			System.err.println("usage: KeytoolBatch FILE");
			System.exit(2);
		}
		List<String> command = new ArrayList<>();
		for (String line : Files.readAllLines(Path.of(args[0]))) {
			if (!line.isEmpty()) {
				command.add(line);
			}
			else if (!command.isEmpty()) {
				run(command);
				command.clear();
			}
		}
		if (!command.isEmpty()) {
			run(command);
		}
	}

	private static void run(List<String> command) throws Exception {
		System.out.println("keytool " + String.join(" ", command));
		System.out.flush();
		sun.security.tools.keytool.Main.main(command.toArray(String[]::new));
	}

}
