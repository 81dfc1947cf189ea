import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * Runs several mqadmin command lines in one JVM (a JVM start per command costs seconds): each line of
 * standard input is one command, its arguments separated by tabs. Every command's output is framed by
 * "=== BEGIN name" and "=== END name" lines; a command that throws prints "command failed: ..." inside
 * its frame, as mqadmin itself does; standard error goes to standard output, so that what a command prints
 * there (mqadmin prints the stack trace of a failed command) is inside its frame.
 */
public class MqadminBatch {
    public static void main(String[] ignored) throws Exception {
        System.setErr(System.out);  // mqadmin prints a failed command's stack trace to standard error
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = input.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] args = line.split("\t");
            System.out.println("=== BEGIN " + args[0]);
            try {
                MQAdminStartup.main0(args, null);
            } catch (Throwable failure) {
                System.out.println("command failed: " + failure);
            }
            System.out.println();  // some commands end their output without a line break
            System.out.println("=== END " + args[0]);
            System.out.flush();
        }
        System.exit(0);
    }
}
