import Testing
import ParleyRTP

// Packets from GStreamer 1.22 rtpvp9pay (two 320x240 frames, mtu=400):
//   gst-launch-1.0 videotestsrc num-buffers=2 pattern=ball ! video/x-raw,width=320,height=240,framerate=30/1 \
//     ! vp9enc deadline=1 target-bitrate=400000 ! rtpvp9pay pt=98 ssrc=0xcafe0002 seqnum-offset=10 \
//       timestamp-offset=0 mtu=400 ! udpsink host=127.0.0.1 port=5054
private let gstreamerVP9Keyframe = "80e2000a00000000cafe00020e18014000f0010401b124c1a148009f8077b061c120e0c2900008806fb0fb17a8b27f0f2c262cf00cd18000005a3ed77540fbd6a49fdeb74ac56e889566472055c45076c259baadfddd89b7f18f616f0913db8b1249284b588634ffeb9dd935021ed3c046974a8c32b3e4433b8ce024d9b3a789f012a3978f44129663894eb232be1f561c91f939ddfd3f98b2f5c2364a17fc24306804f8775887204fdc548f6b3cbe1a6d4634b0d03a0f24151b311d45cf726d5bcd99cbf0cbff662b771647b0ca19cbb5e55b8c253c919122e5119508fdd0a2af19a4c9ff87dae553a11ccd49385918c7bcfdaabf92529cedfd4db1ea5e3d286ac3f798a7f1ea3e8ea51146232e5b3b0e566eb11101f94ee77f238be214e0a074c4ae95c45d0298fe2ca070431f29078cfa29ff19b45ad2ca0c25d8f458ee530cfa010f94f4c7604c6978d3701ee9f39ea89d7ea02f4207d0331d77ef72affb3430ffaba47fe5349e1013c40a217b871e49d5e6672276a0d970901c9fd04f28"
private let gstreamerVP9InterFrame = "80e2000b00000bb7cafe00024cb30020494e4025200001807000005a3579876c3c5826a60e0801184c301369d24f4ffeb87208b316398cf1f5537a3893a6af74ea9087a24c48ecbf1dec6ead9d666aef6fda676afa3509cb0cf1d03000bc2d882585b66ae53d73e5d43b38409d01429e820fb3cc3b4e9c93f91b651a53f52fef8b1e46073a9ed946f0eb8663b7e718eb298bb71857d213f38c44e8"

@Suite struct VP9PayloadFormat {
    func descriptor(_ bytes: [UInt8]) throws(RTPError) -> VP9PayloadDescriptor {
        let r: Result<VP9PayloadDescriptor, RTPError> = bytes.withUnsafeBytes { b in
            do throws(RTPError) { return .success(try VP9PayloadDescriptor(parsing: b)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    /// RFC 9628 4.2 layout, non-flexible mode: I (15-bit PID), L with TL0PICIDX, B, E, and a
    /// scalability structure with one 320x240 layer and a one-entry picture group.
    @Test func nonFlexibleKeyPictureWithScalabilityStructure() throws {
        let d = try descriptor(hex("ae 9234 00 05 18 0140 00f0 01 00 aa"))
        #expect(d.pictureID == 0x1234 && d.longPictureID)
        #expect(d.beginningOfFrame && d.endOfFrame && !d.flexibleMode && !d.interPicturePredicted)
        #expect(d.layer?.temporalID == 0 && d.layer?.spatialID == 0)
        #expect(d.tl0PictureIndex == 5)
        #expect(d.scalability?.spatialLayers == 1 && d.scalability?.pictureGroupSize == 1)
        #expect(d.scalability?.resolutions.first?.width == 320 && d.scalability?.resolutions.first?.height == 240)
        #expect(d.size == 12)
        #expect(d.isPictureStart && d.isKeyPicture)
    }

    /// Flexible mode: layer indices without TL0PICIDX, two reference differences.
    @Test func flexibleModeReferenceDifferences() throws {
        let d = try descriptor(hex("f8 21 53 03 04 aa"))
        #expect(d.pictureID == 0x21 && !d.longPictureID)
        #expect(d.layer?.temporalID == 2 && d.layer?.switchingUp == true && d.layer?.spatialID == 1
                && d.layer?.interLayerDependency == true)
        #expect(d.tl0PictureIndex == nil)
        #expect(d.referenceDiffs == [1, 2])
        #expect(d.size == 5)
        #expect(!d.isPictureStart && !d.isKeyPicture)
        #expect(throws: RTPError.fieldOutOfRange("more than 3 VP9 reference differences")) {
            try descriptor(hex("d8 21 03 05 07 09 aa"))
        }
    }

    @Test func missingDescriptorBytesThrow() {
        #expect(throws: RTPError.emptyPayload) { try descriptor([]) }
        #expect(throws: RTPError.vp9DescriptorTruncated(needed: 2, available: 1)) { try descriptor([0x88]) }
        #expect(throws: RTPError.vp9DescriptorTruncated(needed: 3, available: 2)) { try descriptor([0x88, 0x80]) }
        #expect(throws: RTPError.vp9DescriptorTruncated(needed: 3, available: 2)) { try descriptor([0x28, 0x00]) }  // L without TL0PICIDX
        #expect(throws: RTPError.vp9DescriptorTruncated(needed: 6, available: 3)) { try descriptor([0x0A, 0x10, 0x01]) }  // SS sizes
        #expect(throws: RTPError.vp9DescriptorTruncated(needed: 3, available: 2)) { try descriptor([0x88, 0x05]) }  // no VP9 data
    }

    @Test func rtpvp9payPacketsParse() throws {
        let key = hex(gstreamerVP9Keyframe)
        let d = try parsed(key) { v in
            #expect(v.payloadType == 98 && v.ssrc == 0xCAFE_0002 && v.sequenceNumber == 10 && v.marker)
            return try? VP9PayloadDescriptor(parsing: v.payload)
        }
        #expect(d?.beginningOfFrame == true && d?.endOfFrame == true && d?.isKeyPicture == true)
        #expect(d?.scalability?.resolutions.first?.width == 320 && d?.scalability?.resolutions.first?.height == 240)
        let inter = try parsed(hex(gstreamerVP9InterFrame)) { v in try? VP9PayloadDescriptor(parsing: v.payload) }
        #expect(inter?.interPicturePredicted == true && inter?.isKeyPicture == false && inter?.size == 1)
    }
}
