// Prints the FileDescriptorProto of each file of apache.rocketmq.v2 compiled into the rocketmq-proto jar
// on the class path, one base64 line per file, so the spec's tables can be compared with Apache's own
// build of the interface. Run as a single-file program: java -cp <classpath> DumpProtoDescriptors.java
import java.util.Base64;

public class DumpProtoDescriptors {
    public static void main(String[] args) {
        Base64.Encoder encoder = Base64.getEncoder();
        System.out.println("definition " + encoder.encodeToString(
            apache.rocketmq.v2.MQDomain.getDescriptor().toProto().toByteArray()));
        System.out.println("service " + encoder.encodeToString(
            apache.rocketmq.v2.MQService.getDescriptor().toProto().toByteArray()));
    }
}
