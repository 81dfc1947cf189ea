import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

/**
 * Prints the public static constants of the classes named on the command line, one "Class NAME VALUE"
 * line each, so that the spec's tables can be compared with a release's own jars. A class the class
 * path lacks is reported as "Class #MISSING".
 */
public class DumpConstants {
    public static void main(String[] classNames) {
        for (String className : classNames) {
            Class<?> type;
            try {
                type = Class.forName(className);
            } catch (Throwable missing) {
                System.out.println(className + " #MISSING");
                continue;
            }
            for (Field field : type.getDeclaredFields()) {
                int modifiers = field.getModifiers();
                if (!Modifier.isStatic(modifiers) || !Modifier.isPublic(modifiers)) {
                    continue;
                }
                Object value;
                try {
                    value = field.get(null);
                } catch (Throwable unreadable) {
                    continue;
                }
                if (value instanceof Number || value instanceof String) {
                    System.out.println(className + " " + field.getName() + " " + value);
                }
            }
            if (type.isEnum()) {
                for (Object constant : type.getEnumConstants()) {
                    Enum<?> member = (Enum<?>) constant;
                    System.out.println(className + " " + member.name() + " " + member.ordinal());
                }
            }
        }
    }
}
